/* lr_tuning_table_parse: the committed table's source reads back as the
 * table compiled in, row for row; an empty table; and every malformed form
 * refused naming the file and line. No GPU. */
#include "kernels/tuning.h"
#include "test/t.h"
#include "util/err.h"
#include "util/read_file.h"

#include <stdlib.h>
#include <string.h>

#define HEAD "/* comment */\n#include \"kernels/tuning.h\"\n\nconst lr_tuning_row lr_tuning_table[] = {\n"
#define ROW1 "    { \"NVIDIA H200\", 90, \"leech_p14s\", 5120, 17408, { 768, 1, 2, 1, 1, 1, 1, 0, 266264, 0 }, 18.23 },\n"
#define ROW2 "    { \"NVIDIA Test GPU\", 89, \"f16\", 77, 1001, { 64, -1, 2, 2, 1, -1, 0, -1, 3, 0 }, 3.50 },\n"

static lr_tuning_pick g_rows[4096];

static int parse(const char *text, int max, int *n)
{
    return lr_tuning_table_parse(text, strlen(text), "t.c", g_rows, max, n);
}

/* run from the repository root, as test/run.sh does */
static int test_committed_table_reads_back(void)
{
    void *text;
    size_t len;
    T_SKIP_IF(lr_read_file("kernels/tuning_table.c", &text, &len) != LR_OK, "kernels/tuning_table.c not here");
    int n = -1, rc = lr_tuning_table_parse(text, len, "kernels/tuning_table.c", g_rows, 4096, &n);
    free(text);
    T_ASSERT(rc == LR_OK, "%s", lr_errmsg());
    T_ASSERT(n == lr_tuning_table_n, "%d rows read, %d compiled in", n, lr_tuning_table_n);
    for (int i = 0; i < n; i++) {
        const lr_tuning_row *a = &g_rows[i].row, *b = &lr_tuning_table[i];
        T_ASSERT(a->device == g_rows[i].device && a->arm == g_rows[i].arm, "row %d: pointers not into the pick", i);
        T_ASSERT(!strcmp(a->device, b->device) && !strcmp(a->arm, b->arm) && a->cc == b->cc && a->rows == b->rows &&
                     a->cols == b->cols && !memcmp(a->knobs, b->knobs, sizeof a->knobs) && a->us == b->us,
                 "row %d differs: %s %s %dx%d", i, a->device, a->arm, a->rows, a->cols);
    }
    return T_PASS;
}

static int test_small_tables(void)
{
    int n;
    T_OK(parse(HEAD ROW1 ROW2 "};\nconst int lr_tuning_table_n = 2;\n", 8, &n));
    T_ASSERT(n == 2, "%d rows", n);
    const lr_tuning_row *r = &g_rows[1].row;
    T_ASSERT(!strcmp(r->device, "NVIDIA Test GPU") && r->cc == 89 && !strcmp(r->arm, "f16") && r->rows == 77 &&
                 r->cols == 1001 && r->knobs[0] == 64 && r->knobs[1] == -1 && r->knobs[8] == 3 && r->us == 3.5,
             "row 2 read as %s %d %s %dx%d", r->device, r->cc, r->arm, r->rows, r->cols);
    T_ASSERT(g_rows[0].row.knobs[8] == 266264, "row 1 extra3 %d", g_rows[0].row.knobs[8]);
    /* the placeholder an empty table holds */
    T_OK(parse(HEAD "    { 0, 0, 0, 0, 0, { 0 }, 0 },\n};\nconst int lr_tuning_table_n = 0;\n", 8, &n));
    T_ASSERT(n == 0, "empty table: %d rows", n);
    /* CRLF line ends */
    T_OK(parse("const lr_tuning_row lr_tuning_table[] = {\r\n" ROW1 "};\r\nconst int lr_tuning_table_n = 1;\r\n", 8, &n));
    T_ASSERT(n == 1, "CRLF: %d rows", n);
    return T_PASS;
}

static int test_malformed_refused(void)
{
    static const struct { const char *text, *says; int max; } bad[] = {
        { "", "no \"const lr_tuning_row", 8 },
        { "int x;\n", "no \"const lr_tuning_row", 8 },
        { HEAD ROW1, "not closed", 8 },
        { HEAD ROW1 "};\n", "no row count", 8 },
        { HEAD ROW1 "};\nconst int lr_tuning_table_n = 2;\n", "count line says 2", 8 },
        { HEAD ROW1 "};\nconst int lr_tuning_table_n = 1 ;x\n", ":7: malformed row count", 8 },
        { HEAD ROW1 "};\nconst int lr_tuning_table_n = 1;\nint y;\n", ":8: unexpected text", 8 },
        { HEAD ROW1 ROW2 "};\nconst int lr_tuning_table_n = 2;\n", "more than 1 rows", 1 },
        /* a knob missing, a knob too large, a string too long, text after the row, a negative shape */
        { HEAD "    { \"NVIDIA H200\", 90, \"f16\", 5, 5, { 1, 2, 3, 4, 5, 6, 7, 8, 9 }, 1.0 },\n};\nconst int lr_tuning_table_n = 1;\n", "t.c:5: not a row", 8 },
        { HEAD "    { \"NVIDIA H200\", 90, \"f16\", 5, 5, { 1, 2, 3, 4, 5, 6, 7, 8, 99999999999, 0 }, 1.0 },\n};\nconst int lr_tuning_table_n = 1;\n", "t.c:5: not a row", 8 },
        { HEAD "    { \"NVIDIA H200\", 90, \"f16_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\", 5, 5, { 1, 2, 3, 4, 5, 6, 7, 8, 9, 0 }, 1.0 },\n};\nconst int lr_tuning_table_n = 1;\n", "t.c:5: not a row", 8 },
        { HEAD "    { \"NVIDIA H200\", 90, \"f16\", 5, 5, { 1, 2, 3, 4, 5, 6, 7, 8, 9, 0 }, 1.0 }, x\n};\nconst int lr_tuning_table_n = 1;\n", "t.c:5: not a row", 8 },
        { HEAD "    { \"NVIDIA H200\", 90, \"f16\", -5, 5, { 1, 2, 3, 4, 5, 6, 7, 8, 9, 0 }, 1.0 },\n};\nconst int lr_tuning_table_n = 1;\n", "t.c:5: not a row", 8 },
        { HEAD "    { \"NVIDIA \\\"H200\", 90, \"f16\", 5, 5, { 1, 2, 3, 4, 5, 6, 7, 8, 9, 0 }, 1.0 },\n};\nconst int lr_tuning_table_n = 1;\n", "t.c:5: not a row", 8 },
        { HEAD "    { \"NVIDIA H200\", 90, \"f16\", 5, 5, { 1, 2, 3, 4, 5, 6, 7, 8, 9, 0 }, nan },\n};\nconst int lr_tuning_table_n = 1;\n", "t.c:5: not a row", 8 },
        /* a row that starts like the empty table's placeholder */
        { HEAD "    { 0, 0, 0, 7 },\n};\nconst int lr_tuning_table_n = 0;\n", "t.c:5: not a row", 8 },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int n;
        int rc = parse(bad[i].text, bad[i].max, &n);
        T_ASSERT(rc == LR_EFORMAT || rc == LR_ERANGE, "case %zu accepted (rc %d)", i, rc);
        T_ASSERT(strstr(lr_errmsg(), "t.c") && strstr(lr_errmsg(), bad[i].says), "case %zu says \"%s\", want \"%s\"", i,
                 lr_errmsg(), bad[i].says);
    }
    /* a NUL byte inside the text */
    static const char nul[] = HEAD "\0" ROW1 "};\nconst int lr_tuning_table_n = 1;\n";
    int n;
    T_ASSERT(lr_tuning_table_parse(nul, sizeof nul - 1, "t.c", g_rows, 8, &n) == LR_EFORMAT && strstr(lr_errmsg(), "NUL"),
             "a NUL byte: %s", lr_errmsg());
    return T_PASS;
}

T_MAIN(T_CASE(test_committed_table_reads_back), T_CASE(test_small_tables), T_CASE(test_malformed_refused))
