#include "util/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char g_msg[2048];

int lr_fail(int code, const char *file, int line, const char *fmt, ...)
{
    const char *base = strrchr(file, '/');
    int n = snprintf(g_msg, sizeof g_msg, "%s:%d: ", base ? base + 1 : file, line);
    if (n < 0 || (size_t)n >= sizeof g_msg) n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_msg + n, sizeof g_msg - (size_t)n, fmt, ap);
    va_end(ap);
    return code;
}

int lr_wrap(int code, const char *fmt, ...)
{
    char prefix[1024], old[sizeof g_msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, g_msg, sizeof old);
    snprintf(g_msg, sizeof g_msg, "%s: %s", prefix, old);
    return code;
}

const char *lr_errmsg(void) { return g_msg[0] ? g_msg : "no error"; }
void lr_clear_error(void) { g_msg[0] = 0; }

const char *lr_status_name(int code)
{
    switch (code) {
    case LR_OK: return "ok";
    case LR_ENODEV: return "no device";
    case LR_ECUDA: return "CUDA error";
    case LR_ENVRTC: return "NVRTC error";
    case LR_EIO: return "I/O error";
    case LR_EINVAL: return "invalid input";
    case LR_ENOMEM: return "out of memory";
    case LR_ERANGE: return "out of range";
    case LR_EFORMAT: return "bad format";
    case LR_EUNSUPPORTED: return "unsupported";
    case LR_EVERIFY: return "verification failed";
    }
    return "unknown status";
}
