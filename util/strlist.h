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

#endif
