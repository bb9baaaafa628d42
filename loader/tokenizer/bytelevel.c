/* GPT-2's byte-to-unicode alphabet, used by byte-level BPE vocabularies so
 * every byte is a printable character: bytes that are printable Latin-1
 * (0x21-0x7E, 0xA1-0xAC, 0xAE-0xFF) stand for themselves, the other 68 take
 * U+0100.. U+0143 in byte order (space 0x20 -> U+0120 'Ġ', '\n' -> U+010A). */
#include "loader/tokenizer/tok_internal.h"
#include "loader/tokenizer/unicode.h"

#include <string.h>

/* The byte a character of the alphabet stands for, or -1. */
static int alphabet_byte(uint32_t cp)
{
    if ((cp >= 0x21 && cp <= 0x7E) || (cp >= 0xA1 && cp <= 0xAC) || (cp >= 0xAE && cp <= 0xFF))
        return (int)cp;
    if (cp < 0x100 || cp >= 0x144) return -1;
    uint32_t k = cp - 0x100; /* k-th byte outside the printable ranges */
    if (k < 33) return (int)k;              /* 0x00..0x20 */
    if (k < 67) return (int)(0x7F + k - 33); /* 0x7F..0xA0 */
    return 0xAD;
}

size_t tok_bytelevel_decode(const char *str, size_t len, uint8_t *out)
{
    const uint8_t *s = (const uint8_t *)str;
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        i += (size_t)lr_utf8_decode(s + i, len - i, &cp);
        int b = alphabet_byte(cp);
        if (b < 0) {
            memcpy(out, s, len); /* not byte-level text: keep it as it is */
            return len;
        }
        out[o++] = (uint8_t)b;
    }
    return o;
}
