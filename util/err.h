/* Error reporting for library code: functions return a status code and leave
 * a message in a thread-local buffer; only programs print and exit. */
#ifndef LR_ERR_H
#define LR_ERR_H

enum lr_status {
    LR_OK = 0,
    LR_ENODEV,       /* no driver or no GPU */
    LR_ECUDA,        /* a driver call failed */
    LR_ENVRTC,       /* NVRTC failed or is missing */
    LR_EIO,          /* file system */
    LR_EINVAL,       /* bad argument or bad input data */
    LR_ENOMEM,       /* host allocation */
    LR_ERANGE,       /* value out of range (index >= N, launch above a bound) */
    LR_EFORMAT,      /* malformed file */
    LR_EUNSUPPORTED, /* valid but not implemented here */
    LR_EVERIFY,      /* a kernel disagreed with its reference */
};

/* Sets the message ("file:line: text") and returns code, so callers can write
 * `return LR_FAIL(LR_EINVAL, "rows=%d", rows);`. */
int lr_fail(int code, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
#define LR_FAIL(code, ...) lr_fail((code), __FILE__, __LINE__, __VA_ARGS__)

/* Prefixes the current message with more context ("loading x: <old>"). */
int lr_wrap(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

const char *lr_errmsg(void);
const char *lr_status_name(int code);
void lr_clear_error(void);

#endif
