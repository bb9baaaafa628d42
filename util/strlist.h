/* Comma-separated option lists ("4B,8B,14B"), as the tools take them. */
#ifndef LR_STRLIST_H
#define LR_STRLIST_H
#include <string.h>

/* 1 if item is one of list's comma-separated entries; a NULL list holds everything. */
static inline int lr_list_has(const char *list, const char *item)
{
    if (!list) return 1;
    size_t n = strlen(item);
    if (!n) return 0;
    for (const char *p = list; (p = strstr(p, item)); p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == 0)) return 1;
    return 0;
}

/* The first of list's comma-separated entries that is none of names[0..n)
 * (its length in *len), or NULL when every entry is one of them: tools refuse
 * a mistyped name instead of silently selecting nothing. */
static inline const char *lr_list_unknown(const char *list, const char *const *names, int n, size_t *len)
{
    for (const char *p = list; p && *p;) {
        const size_t l = strcspn(p, ",");
        int k = 0;
        while (k < n && !(strlen(names[k]) == l && !strncmp(p, names[k], l))) k++;
        if (k == n) return *len = l, p;
        p += l + (p[l] == ',');
    }
    return NULL;
}

#endif