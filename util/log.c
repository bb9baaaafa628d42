#include "util/log.h"

#include <stdarg.h>
#include <stdio.h>

static const char *g_prog = "leechrt";
static void default_warn(const char *msg) { fprintf(stderr, "%s: warning: %s\n", g_prog, msg); }

void lr_warn_set_program(const char *prog) { g_prog = prog && *prog ? prog : "leechrt"; }
static lr_warn_fn g_warn = default_warn;

static _Thread_local int t_muted;

void lr_set_warn_handler(lr_warn_fn fn) { g_warn = fn; }

void lr_warn_mute(int on) { t_muted += on ? 1 : (t_muted > 0 ? -1 : 0); }

void lr_warn(const char *fmt, ...)
{
    if (!g_warn || t_muted) return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    g_warn(buf);
}
