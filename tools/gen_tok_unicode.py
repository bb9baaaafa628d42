#!/usr/bin/env python3
"""Generates loader/tokenizer/unicode_tables.c: the Unicode data the tokenizer
needs, as compact sorted tables.

  * character classes for the pre-tokenizer patterns: \\p{L} (category L*),
    \\p{N} (category N*), \\s (the White_Space property, as Oniguruma and Rust's
    char::is_whitespace use it), everything else;
  * a flag marking code points that may change under NFC (NFC_Quick_Check not
    Yes, or a non-zero canonical combining class): text without any of them is
    already NFC and is passed through untouched;
  * canonical combining classes, full canonical decompositions and the primary
    composition pairs for NFC (see nfc_source: matched to the reference
    tokenizer's NFC, which uses older Unicode data).

Run at development time only (the generated file is committed):
    pip install unicodedata2==16.0.0 tokenizers==0.23.3
    python3 tools/gen_tok_unicode.py > loader/tokenizer/unicode_tables.c
Unicode 16.0 is what Hugging Face tokenizers 0.23 (its Oniguruma regex engine
and NFC) uses, so the tables match the reference tokenizer code point for
code point. Without the unicodedata2 package, Python's own unicodedata is used
(another Unicode version: letters added since then become "other"). The
version is written into the output (lr_unicode_version).
"""
import sys
try:
    import unicodedata2 as ud
except ImportError:
    import unicodedata as ud

MAXCP = 0x110000
# The White_Space property (PropList.txt). Python's str.isspace() differs
# (it includes U+001C..U+001F), so the list is spelled out; it has been stable
# since Unicode 6.3.
WHITE_SPACE = set(list(range(0x09, 0x0E)) + [0x20, 0x85, 0xA0, 0x1680] +
                  list(range(0x2000, 0x200B)) + [0x2028, 0x2029, 0x202F, 0x205F, 0x3000])

CLS_OTHER, CLS_L, CLS_N, CLS_WS = 0, 1, 2, 3
NFC_FLAG = 4

SBASE, LBASE, VBASE, TBASE = 0xAC00, 0x1100, 0x1161, 0x11A7
LCOUNT, VCOUNT, TCOUNT = 19, 21, 28
SCOUNT = LCOUNT * VCOUNT * TCOUNT


def cls(cp):
    if cp in WHITE_SPACE:
        return CLS_WS
    cat = ud.category(chr(cp))
    if cat[0] == 'L':
        return CLS_L
    if cat[0] == 'N':
        return CLS_N
    return CLS_OTHER


def canon_decomp(cp):
    """One level of canonical decomposition, or None."""
    d = ud.decomposition(chr(cp))
    if not d or d.startswith('<'):
        return None
    return [int(x, 16) for x in d.split()]


def nfc_source():
    """The NFC behaviour to reproduce: (nfc, nfd, known_ccc, description).

    Hugging Face tokenizers (0.23) normalizes with an old copy of the Unicode
    normalization data (Unicode 9.0: marks added later have class 0 there and
    newer decompositions are unknown), while its regex classes are Unicode 16.
    To give the same ids, the NFC tables are restricted to what tokenizers'
    own NFC/NFD know, found by asking them character by character. Canonical
    classes and decompositions never change once assigned (Unicode stability
    policy), so this is the older version's data. Without tokenizers, the
    unicodedata module's full NFC is used."""
    try:
        import tokenizers
        from tokenizers import normalizers
    except ImportError:
        return (lambda s: ud.normalize('NFC', s), lambda s: ud.normalize('NFD', s),
                lambda cp: ud.combining(chr(cp)), '%s NFC' % ud.__name__)
    nfc, nfd = normalizers.NFC().normalize_str, normalizers.NFD().normalize_str

    def known_ccc(cp):
        k = ud.combining(chr(cp))
        if k == 0:
            return 0
        m, d = chr(cp), ud.normalize('NFD', chr(cp))
        # Does tokenizers order it against a mark of class 230 or 220?
        if k < 230:
            return k if nfd('|\u0301' + m) == '|' + d + '\u0301' else 0
        return k if nfd('|' + m + '\u0316') == '|\u0316' + d else 0
    return nfc, nfd, known_ccc, 'NFC as tokenizers %s does it' % tokenizers.__version__


def main():
    out = sys.stdout.write
    nfc, nfd, known_ccc, nfc_desc = nfc_source()
    decomp = {}     # cp -> full canonical decomposition (list), Hangul excluded
    pairs = {}      # (first, second) -> primary composite
    seconds = set()
    ccc = [0] * MAXCP
    for cp in range(MAXCP):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        c = chr(cp)
        ccc[cp] = known_ccc(cp)
        one = canon_decomp(cp)
        if one is None:
            continue
        d = nfd(c)
        if d == c:
            continue  # a decomposition the reference NFC does not know
        decomp[cp] = [ord(x) for x in d]
        # A primary composite: a two-character canonical decomposition that
        # NFC does not exclude (excluded characters do not survive NFC).
        if len(one) == 2 and nfc(c) == c:
            pairs[(one[0], one[1])] = cp
            seconds.add(one[1])
    # Hangul jamo that compose algorithmically.
    for v in range(VBASE, VBASE + VCOUNT):
        seconds.add(v)
    for t in range(TBASE + 1, TBASE + TCOUNT):
        seconds.add(t)

    def may_change(cp):
        if ccc[cp] != 0 or cp in seconds:
            return True
        if 0xD800 <= cp <= 0xDFFF:
            return False
        c = chr(cp)
        return nfc(c) != c

    # Class + NFC flag as runs: start[i] begins a run of value val[i].
    starts, vals = [], []
    prev = None
    for cp in range(MAXCP):
        v = cls(cp) | (NFC_FLAG if may_change(cp) else 0)
        if v != prev:
            starts.append(cp)
            vals.append(v)
            prev = v

    cstarts, cvals = [], []
    prev = None
    for cp in range(MAXCP):
        if ccc[cp] != prev:
            cstarts.append(cp)
            cvals.append(ccc[cp])
            prev = ccc[cp]

    out('/* Generated by tools/gen_tok_unicode.py: classes from %s (Unicode %s),\n'
        ' * normalization: %s. Do not edit; re-run the script instead. */\n'
        % (ud.__name__, ud.unidata_version, nfc_desc))
    out('#include "loader/tokenizer/unicode.h"\n\n')
    out('const char lr_unicode_version[] = "%s";\n' % ud.unidata_version)
    out('const char lr_unicode_nfc_source[] = "%s";\n\n' % nfc_desc)

    def arr(ctype, name, items, per=12, fmt='0x%X'):
        out('const %s %s[%d] = {\n' % (ctype, name, len(items)))
        for i in range(0, len(items), per):
            out('    ' + ', '.join(fmt % x for x in items[i:i + per]) + ',\n')
        out('};\n')

    out('/* Class runs: code points [lr_uc_run_start[i], lr_uc_run_start[i+1])\n'
        ' * have class lr_uc_run_val[i] & 3 (LR_UC_*), NFC flag & 4. */\n')
    out('const unsigned lr_uc_nruns = %d;\n' % len(starts))
    arr('uint32_t', 'lr_uc_run_start', starts)
    arr('uint8_t', 'lr_uc_run_val', vals, per=24, fmt='%d')
    out('\n/* Canonical combining class runs, same layout. */\n')
    out('const unsigned lr_uc_nccc = %d;\n' % len(cstarts))
    arr('uint32_t', 'lr_uc_ccc_start', cstarts)
    arr('uint8_t', 'lr_uc_ccc_val', cvals, per=24, fmt='%d')

    keys = sorted(decomp)
    pool, offs, lens = [], [], []
    for k in keys:
        offs.append(len(pool))
        lens.append(len(decomp[k]))
        pool.extend(decomp[k])
    assert max(lens) <= 4 and len(pool) < 65536
    out('\n/* Full canonical decompositions (Hangul syllables are algorithmic):\n'
        ' * lr_uc_decomp_cp[i] -> lr_uc_decomp_pool[off[i] .. off[i]+len[i]). */\n')
    out('const unsigned lr_uc_ndecomp = %d;\n' % len(keys))
    arr('uint32_t', 'lr_uc_decomp_cp', keys)
    arr('uint16_t', 'lr_uc_decomp_off', offs, fmt='%d')
    arr('uint8_t', 'lr_uc_decomp_len', lens, per=24, fmt='%d')
    arr('uint32_t', 'lr_uc_decomp_pool', pool)

    pk = sorted(pairs)
    out('\n/* Primary composites: (first << 21 | second) -> composite, sorted. */\n')
    out('const unsigned lr_uc_ncomp = %d;\n' % len(pk))
    arr('uint64_t', 'lr_uc_comp_key', [(a << 21) | b for a, b in pk], per=6)
    arr('uint32_t', 'lr_uc_comp_val', [pairs[p] for p in pk])


if __name__ == '__main__':
    main()
