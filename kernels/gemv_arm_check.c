/* The benchmark arms' timed path checked against their verified one
 * (kernels/gemv_arm.h). Verify uploads its own copy of the weights and
 * launches through the ffi path; the timing launches the arm's device
 * image through arm->launch. Comparing the two on the same x closes the gap
 * between what was verified and what was timed. */
#include "kernels/gemv_arm.h"
#include "util/err.h"

#include <stdlib.h>
#include <string.h>

void lr_gemv_arm_io_keep(lr_gemv_arm_io *io, float **x, size_t nx, float **y, size_t ny)
{
    if (!io) return;
    io->x = *x, io->nx = nx, io->y = *y, io->ny = ny;
    *x = NULL, *y = NULL;
}

void lr_gemv_arm_io_free(lr_gemv_arm_io *io)
{
    free(io->x);
    free(io->y);
    memset(io, 0, sizeof *io);
}

int lr_gemv_arm_check_launch(const lr_gemv_arm *arm, void *state, int copies, const lr_gemv_arm_io *io,
                             CUdeviceptr x, CUdeviceptr y, int *checked)
{
    *checked = 0;
    if (!io->x || !io->y || !io->ny) return LR_OK;
    float *got = malloc(io->ny * sizeof *got);
    if (!got) return LR_FAIL(LR_ENOMEM, "out of memory");
    int rc = lr_cu_h2d(x, io->x, io->nx * sizeof(float));
    for (int c = 0; c < copies && !rc; c++) {
        if ((rc = lr_cu_memset8(y, 0xff, io->ny * sizeof(float))) || (rc = arm->launch(state, c, x, y, NULL)) ||
            (rc = lr_cu_sync()) || (rc = lr_cu_d2h(got, y, io->ny * sizeof(float))))
            break;
        for (size_t i = 0; i < io->ny; i++)
            if (memcmp(&got[i], &io->y[i], sizeof(float))) {
                rc = LR_FAIL(LR_EVERIFY, "%s: the timed launch of copy %d of %d gives row %zu = %.9g, the verified launch %.9g",
                             arm->name, c, copies, i, got[i], io->y[i]);
                break;
            }
        if (!rc) ++*checked;
    }
    free(got);
    return rc;
}
