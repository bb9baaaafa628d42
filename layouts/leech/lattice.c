/* Membership in the integer embedding sqrt(8)*L24 (a point x of Z^24):
 *   (i)   all coordinates have one parity p;
 *   (ii)  the positions where x = 2 + p (mod 4) form a Golay codeword
 *         (for odd points that is x = 3 mod 4; its complement, x = 1 mod 4,
 *         is then a codeword too, since the all-ones word is one);
 *   (iii) sum(x) = 4p (mod 8).
 * Residues are taken on the byte as unsigned: 256 = 0 (mod 8), so the
 * residues mod 2, 4 and 8 of a negative int8_t come out right. */
#include "layouts/leech/leech.h"

int lr_leech_is_point(const int8_t x[24])
{
    unsigned p = (uint8_t)x[0] & 1u;
    uint32_t word = 0;
    unsigned sum = 0;
    for (int i = 0; i < 24; i++) {
        unsigned u = (uint8_t)x[i];
        if ((u & 1u) != p) return 0;
        word |= (((u - p) >> 1) & 1u) << i;
        sum += u;
    }
    if (lr_golay_index(word) < 0) return 0;
    return (sum & 7u) == 4u * p;
}

int lr_leech_norm(const int8_t x[24])
{
    int n = 0;
    for (int i = 0; i < 24; i++) n += x[i] * x[i];
    return n;
}
