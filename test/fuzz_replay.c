/* Replays files (or every file in folders) through a fuzz target's
 * LLVMFuzzerTestOneInput under a normal build, so corpora and past crash
 * inputs are regression tests without clang. Prints t-summary like a test. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "cannot open %s\n", path); return 1; }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
    if (!buf || (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n)) { fclose(f); free(buf); return 1; }
    fclose(f);
    LLVMFuzzerTestOneInput(buf, (size_t)n);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    int files = 0, bad = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            DIR *d = opendir(argv[i]);
            struct dirent *e;
            while (d && (e = readdir(d))) {
                if (e->d_name[0] == '.') continue;
                char p[4096];
                snprintf(p, sizeof p, "%s/%s", argv[i], e->d_name);
                bad += replay_file(p);
                files++;
            }
            if (d) closedir(d);
        } else {
            bad += replay_file(argv[i]);
            files++;
        }
    }
    /* A replayer survives every input or crashes: surviving is the pass. */
    printf("%s replayed %d inputs\n", bad ? "FAIL" : "ok  ", files);
    printf("t-summary: %d %d 0\n", bad ? 0 : 1, bad ? 1 : 0);
    return bad != 0;
}
