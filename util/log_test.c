/* lr_warn through the handler; lr_warn_mute silences the calling thread
 * only, nests, and never goes below zero. */
#include "test/t.h"
#include "util/log.h"

#include <pthread.h>
#include <sys/wait.h>

static int g_seen;
static void count(const char *msg) { g_seen += msg[0] == 'w'; }

static void *other_thread(void *arg)
{
    (void)arg;
    lr_warn("w from another thread");
    return NULL;
}

/* The default handler names the program that warns (a tool's warnings once
 * all said "leechrt"). Run in a child, before any handler is replaced. */
static int test_program_prefix(void)
{
    int fd[2];
    T_ASSERT(pipe(fd) == 0, "pipe");
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 2);
        lr_warn("first");
        lr_warn_set_program("tool");
        lr_warn("second %d", 2);
        lr_warn_set_program(NULL);
        lr_warn("third");
        _exit(0);
    }
    close(fd[1]);
    char buf[512];
    ssize_t n = read(fd[0], buf, sizeof buf - 1), k;
    while (n >= 0 && (size_t)n < sizeof buf - 1 && (k = read(fd[0], buf + n, sizeof buf - 1 - (size_t)n)) > 0) n += k;
    close(fd[0]);
    waitpid(pid, NULL, 0);
    buf[n > 0 ? n : 0] = 0;
    T_ASSERT(!strcmp(buf, "leechrt: warning: first\ntool: warning: second 2\nleechrt: warning: third\n"), "stderr: '%s'",
             buf);
    return T_PASS;
}

static int test_mute(void)
{
    lr_set_warn_handler(count);
    g_seen = 0;
    lr_warn("w %d", 1);
    T_ASSERT(g_seen == 1, "unmuted: %d", g_seen);
    lr_warn_mute(1);
    lr_warn_mute(1);
    lr_warn("w %d", 2);
    pthread_t t;
    T_ASSERT(pthread_create(&t, NULL, other_thread, NULL) == 0, "thread");
    pthread_join(t, NULL);
    T_ASSERT(g_seen == 2, "muted here, not there: %d", g_seen);
    lr_warn_mute(0);
    lr_warn("w %d", 3);
    T_ASSERT(g_seen == 2, "nested mute lifted early: %d", g_seen);
    lr_warn_mute(0);
    lr_warn_mute(0); /* one too many: stays unmuted, not -1 */
    lr_warn("w %d", 4);
    T_ASSERT(g_seen == 3, "unmuted again: %d", g_seen);
    lr_warn_mute(1);
    lr_warn_mute(0);
    lr_warn("w %d", 5);
    T_ASSERT(g_seen == 4, "an extra unmute left a debt: %d", g_seen);
    lr_set_warn_handler(NULL);
    lr_warn("w %d", 6);
    T_ASSERT(g_seen == 4, "NULL handler: %d", g_seen);
    return T_PASS;
}

T_MAIN(T_CASE(test_program_prefix), T_CASE(test_mute))
