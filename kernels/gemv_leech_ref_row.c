/* The shared end of a row in the Leech host references (kernels/gemv_leech.h). */
#include "kernels/gemv_leech.h"
#include "util/half.h"

#include <math.h>

float lr_leech_ref_row_end(double s, int r, const uint32_t *exc_ptr, const uint32_t *exc_col, const float *exc_dw,
                           const uint16_t *tail, int nt, const float *x, int tail_col0, const float *row_scale,
                           int mag)
{
    double t = 0;
    for (uint32_t e = exc_ptr[r]; e < exc_ptr[r + 1]; e++) {
        double v = (double)exc_dw[e] * x[exc_col[e]];
        s += mag ? fabs(v) : v;
    }
    for (int k = 0; k < nt; k++) {
        double v = (double)lr_half_to_float(tail[(size_t)r * nt + k]) * x[tail_col0 + k];
        t += mag ? fabs(v) : v;
    }
    return (float)(s * (mag ? fabs(row_scale[r]) : row_scale[r]) + t);
}
