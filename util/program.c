#include "util/program.h"
#include "util/log.h"
#include "util/stdout_check.h"

void lr_program_init(const char *name)
{
    lr_stdout_check_at_exit(name);
    lr_warn_set_program(name);
}
