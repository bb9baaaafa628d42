/* lr_warn through the handler; lr_warn_mute silences the calling thread
 * only, nests, and never goes below zero. */
#include "test/t.h"
#include "util/log.h"

#include <pthread.h>

static int g_seen;
static void count(const char *msg) { g_seen += msg[0] == 'w'; }

static void *other_thread(void *arg)
{
    (void)arg;
    lr_warn("w from another thread");
    return NULL;
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

T_MAIN(T_CASE(test_mute))
