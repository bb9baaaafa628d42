#!/usr/bin/env python3
"""Writes expected-id fixtures for loader/tokenizer/tokenizer_test.c, computed
independently with Hugging Face's `tokenizers` package (development time
only: pip install tokenizers; CI reads the committed file).

    python3 tools/gen_tok_fixtures.py TOKENIZER.json[.gz] > loader/tokenizer/testdata/qwen3_cases.txt
    python3 tools/gen_tok_fixtures.py TOKENIZER.json[.gz] --random 5000 --seed 1 > /tmp/random_cases.txt
    python3 tools/gen_tok_fixtures.py --pretok > loader/tokenizer/testdata/pretok_cases.txt
    python3 tools/gen_tok_fixtures.py --nfc > loader/tokenizer/testdata/nfc_cases.txt
    python3 tools/gen_tok_fixtures.py --lossy > loader/tokenizer/testdata/lossy_cases.txt

Each line: name TAB allow_special(0/1) TAB text (hex of UTF-8) TAB ids
(space-separated) TAB decoded text (hex; '-' when equal to the input, i.e.
the input is already NFC). allow_special=0 uses encode_special_tokens=True
(special added tokens are split as plain text; non-special ones still match).

--pretok: piece boundaries of the three split patterns (Qwen2/3, Llama-3,
GPT-2, and GPT-2 after a Digits split: smollm, digitruns) from tokenizers' own regex engine: pattern TAB text hex TAB the byte
offsets where pieces end. --nfc: input hex TAB NFC hex (tokenizers' NFC).
--lossy: bytes hex TAB bytes.decode('utf-8', 'replace') hex.
"""
import argparse
import gzip
import random
import sys

from tokenizers import Tokenizer
import tokenizers


def designed_cases():
    c = []
    add = lambda name, text, special=1: c.append((name, special, text))
    add('empty', '')
    add('hello', 'Hello world')
    add('sentence', 'The quick brown fox jumps over the lazy dog.')
    add('contractions', "I'm sure you're right, we've seen they'll go, she'd say it's fine; DON'T")
    add('contractions_case', "YOU'RE He'S we'Ll 'll 's 'x can't 're")
    add('contraction_long_s', "it'\u017f")
    add('digits', '1234567890')
    add('numbers', 'pi=3.14159, e=2.71828; 2**32 = 4294967296 and 1,000,000.00')
    add('digits_other', '\u0661\u0662\u0663 \u2167 \u00bd \u00b2 \u2460 \uff11\uff12')
    add('spaces', 'a  b   c    d')
    add('leading_trailing', '   leading and trailing   ')
    add('only_spaces', '        ')
    add('tabs', '\t\tindented\twith\ttabs\t')
    add('newlines', 'line1\nline2\n\n\nline3\n')
    add('crlf', 'windows\r\nline\r\n\r\n  indented\r\n')
    add('space_newline_mix', ' \n \n  \n\t\n x')
    add('ws_before_word', '   \n  x   y')
    add('unicode_spaces', 'nbsp\u00a0here\u3000ideographic\u2028sep\u2003em\u202fnarrow\u0085nel')
    add('vt_ff', 'a\x0bb\x0cc \x0b\x0c d')
    add('control_chars', ''.join(chr(i) for i in range(0, 32)) + '\x7f')
    add('punct', 'Hi!!! What?! ...\n\n\nok --- (yes) [no] {maybe} <tag/> "quoted" \'single\'')
    add('punct_newline', '?!?\r\n\r\n;;\n')
    add('urls', 'Visit https://example.com/path?q=1&x=2#frag or mail me@example.org, $100 #tag @user')
    add('ascii_printable', ''.join(chr(i) for i in range(32, 127)))
    add('latin1', ''.join(chr(i) for i in range(0xa0, 0x100)))
    add('python_code', 'def fib(n):\n    """Fibonacci."""\n    if n < 2:\n        return n\n'
                       '    return fib(n - 1) + fib(n - 2)\n\nprint([fib(i) for i in range(10)])\n')
    add('c_code', '#include <stdio.h>\n\nint main(void) {\n\tfor (int i = 0; i < 10; i++)\n'
                  '\t\tprintf("%d\\n", i * i);\n\treturn 0;\n}\n')
    add('json', '{"name": "leechrt", "version": [1, 2, 3], "ok": true, "x": null}')
    add('chinese', '你好，世界！今天天气很好。我们去公园散步吧。')
    add('japanese', 'こんにちは世界、カタカナとひらがな。東京は大きい。')
    add('korean', '안녕하세요 세계. 한국어 토크나이저 테스트입니다.')
    add('arabic', 'مرحبا بالعالم، كيف حالك؟')
    add('hindi', 'नमस्ते दुनिया, आप कैसे हैं?')
    add('thai', 'สวัสดีชาวโลก')
    add('cyrillic_greek', 'Привет, мир! Γειά σου Κόσμε. Ωμέγα')
    add('emoji', 'I \u2764\ufe0f tokenizers 🙂👍🏽 👨‍👩‍👧‍👦 🇺🇸🇯🇵 ✨🚀')
    add('combining_nfd', 'Cafe\u0301 nai\u0308ve An\u0303o u\u0308ber')
    add('combining_order', 'a\u0323\u0307 q\u0307\u0323 \u1e9b\u0323 e\u0301\u0301')
    add('singletons', '\u212b \u2126 \u212a \u0344 \u0958')
    add('hangul_jamo', '\u1100\u1161\u11a8 \u1112\u1161\u11ab\u1100\u1173\u11af')
    add('zalgo', 'Z\u0334\u0321\u031ba\u0338l\u0337g\u0335o\u0336!')
    add('math', '∀x∈ℝ: x² ≥ 0, ∑ᵢ aᵢ = ∫ f(x) dx ≈ 3.14')
    add('repeat_letters', 'a' * 300)
    add('repeat_punct', '!' * 100 + '?' * 50)
    add('repeat_spaces', ' ' * 200 + 'x')
    add('repeat_newlines', '\n' * 64)
    add('mixed_script_word', 'abcабвαβγ你好abc123def')
    add('apostrophes', "'s 't 're 've 'm 'll 'd ' '' ''' x' 'x")
    add('chat', '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n'
                'What is 2+2?<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n4<|im_end|>\n')
    add('chat_no_special', '<|im_start|>user\nHi<|im_end|>\n<think>x</think>', 0)
    add('special_adjacent', '<|im_start|><|im_end|><|endoftext|><|im_start|>')
    add('special_spaces', '  <|im_start|>  user <|im_end|>  ')
    add('special_partial', '<|im_start <|im_end| <|endoftext|x <|')
    add('tool_call', '<tool_call>\n{"name": "f", "arguments": {"x": 1}}\n</tool_call>')
    add('fim', '<|fim_prefix|>def f():\n<|fim_suffix|>\n<|fim_middle|>')
    add('all_added', '<|endoftext|><|im_start|><|im_end|><|object_ref_start|><|object_ref_end|><|box_start|>'
                     '<|box_end|><|quad_start|><|quad_end|><|vision_start|><|vision_end|><|vision_pad|>'
                     '<|image_pad|><|video_pad|><tool_call></tool_call><|fim_prefix|><|fim_middle|>'
                     '<|fim_suffix|><|fim_pad|><|repo_name|><|file_sep|><tool_response></tool_response>'
                     '<think></think>')
    add('all_added_no_special', '<|endoftext|><|im_start|>x<|vision_pad|><think></think><|fim_pad|>', 0)
    rnd = random.Random(7)
    words = ['the', 'tokenizer', 'splits', 'text', 'into', 'pieces', 'and', 'merges', 'bytes', 'Qwen3',
             'model', '42', '2024', 'GPU', 'kernel', 'fast!', '(ok)', 'naïve', '東京', 'über', "don't",
             'x_y', '==', '\n', '\n\n', '  ', '\t', '🙂', 'Ελλάδα', 'москва', '-', '...']
    long = ''.join(rnd.choice(words) + rnd.choice([' ', ' ', ' ', '', ', ', '. ']) for _ in range(900))
    add('long_mixed', long)
    return c


POOLS = [
    'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ',
    '0123456789',
    ' ', ' ', '  ', '\n', '\r\n', '\t', '\r', '\x0b\x0c\x85\xa0\u2028\u3000\u2003',
    '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~',
    "'", 'sStTmMdDrReEvVlL',
    'àéîõüçñßøåæœÀÉÎÕÜÇÑ',
    '你好世界中文字符測試東京大阪한국어ひらがなカタカナ',
    '\u0300\u0301\u0302\u0303\u0308\u0323\u0327\u0331\u0345\u05b0\u0e31\u1dc0\u20d0\u302a\u3099',
    '\u1100\u1161\u11a8\u1112\u1173\u11af\uac00\ud55c',
    '🙂👍🏽👨‍👩‍👧‍👦🇺🇸✨❤️\ufe0f\u200d',
    '١٢٣٤٥६७८९Ⅻ½²①１２',
    'مرحبا नमस्ते สวัสดี Привет Γειά',
    '\u212b\u2126\u212a\u0344\u0958\u1e9b\uf900\u2000\u2001',
]
SPECIALS = ['<|im_start|>', '<|im_end|>', '<|endoftext|>', '<think>', '</think>', '<tool_call>',
            '<|fim_pad|>', '<|im_start', '<|', '|>', '<']


def random_text(rnd):
    parts = []
    for _ in range(rnd.randint(1, 30)):
        r = rnd.random()
        if r < 0.05:
            parts.append(rnd.choice(SPECIALS))
        elif r < 0.12:
            # any code point but surrogates
            while True:
                cp = rnd.choice([rnd.randrange(0x80, 0x800), rnd.randrange(0x800, 0x10000),
                                 rnd.randrange(0x10000, 0x110000)])
                if not 0xD800 <= cp <= 0xDFFF:
                    break
            parts.append(chr(cp))
        else:
            pool = rnd.choice(POOLS)
            parts.append(''.join(rnd.choice(pool) for _ in range(rnd.randint(1, 8))))
    return ''.join(parts)


QWEN2_RE = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
            r"|\s*[\r\n]+|\s+(?!\S)|\s+")
LLAMA3_RE = QWEN2_RE.replace(r"|\p{N}|", r"|\p{N}{1,3}|")


def pretok_cases(n_random, seed):
    from tokenizers import Regex, pre_tokenizers
    pats = {
        'qwen2': pre_tokenizers.Split(Regex(QWEN2_RE), 'isolated'),
        'llama3': pre_tokenizers.Split(Regex(LLAMA3_RE), 'isolated'),
        'gpt2': pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        'smollm': pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                           pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)]),
        'digitruns': pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=False),
                                              pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)]),
    }
    rnd = random.Random(seed)
    texts = [t for name, _, t in designed_cases() if t and len(t) < 300] + [random_text(rnd) for _ in range(n_random)]
    print('# Pre-tokenizer piece ends from Hugging Face tokenizers %s (tools/gen_tok_fixtures.py --pretok).'
          % tokenizers.__version__)
    for name, pt in pats.items():
        for text in texts:
            enc = text.encode('utf-8')
            pieces = pt.pre_tokenize_str(text)
            ends = []
            for piece, (a, b) in pieces:
                # offsets are in characters; convert to byte offsets
                ends.append(len(text[:b].encode('utf-8')))
            assert not ends or ends[-1] == len(enc), (name, text)
            print('%s\t%s\t%s' % (name, enc.hex(), ' '.join(map(str, ends))))


def nfc_cases(seed):
    from tokenizers import normalizers
    nfc = normalizers.NFC().normalize_str
    print('# NFC from Hugging Face tokenizers %s (tools/gen_tok_fixtures.py --nfc).' % tokenizers.__version__)
    changing = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF and nfc(chr(c)) != chr(c)]
    for i in range(0, len(changing), 48):
        s = '|'.join(changing[i:i + 48])
        print('%s\t%s' % (s.encode().hex(), nfc(s).encode().hex()))
    rnd = random.Random(seed)
    bases = 'aeiouAEIOUnNcCsSzZyYwWqx\u0391\u03b1\u0415\u0435\u0b47\u0dd9\u1025\u3046\u30a6\u05d0'
    marks = [c for c in map(chr, range(0x300, 0x370))] + list(
        '\u0323\u0327\u0328\u0345\u05b4\u05bc\u0b3e\u0b56\u0b57\u0dca\u0dcf\u0ddf\u102e\u3099\u309a'
        '\u1dc0\u20d0\u302a\u0f71\u0f72\u0f74\u0f80')
    jamo = [chr(c) for c in list(range(0x1100, 0x1113)) + list(range(0x1161, 0x1176)) + list(range(0x11a8, 0x11c3))]
    pre = [chr(c) for c in (0xe0, 0xe9, 0x1e9b, 0x1ea1, 0x1f00, 0xac00, 0xac01, 0xd7a3, 0x212b, 0x2126)]
    for _ in range(300):
        s = ''.join(rnd.choice([lambda: rnd.choice(bases), lambda: rnd.choice(marks), lambda: rnd.choice(marks),
                                lambda: rnd.choice(jamo), lambda: rnd.choice(pre)])()
                    for _ in range(rnd.randint(1, 12)))
        print('%s\t%s' % (s.encode().hex(), nfc(s).encode().hex()))


def lossy_cases(seed):
    print('# bytes.decode("utf-8", "replace") from Python %s (tools/gen_tok_fixtures.py --lossy).'
          % sys.version.split()[0])
    rnd = random.Random(seed)
    pieces = [b'a', b' ', b'\xc3\xa9', b'\xe4\xbd\xa0', b'\xf0\x9f\x99\x82', b'\xc3', b'\xe4\xbd', b'\xe4',
              b'\xf0\x9f', b'\xf0\x9f\x99', b'\x80', b'\xbf', b'\xc0\x80', b'\xe0\x80\x80', b'\xed\xa0\x80',
              b'\xf4\x90\x80\x80', b'\xf5', b'\xff', b'\xfe', b'\xe0\xa0', b'\xf4\x8f\xbf\xbf', b'\xc2']
    for _ in range(200):
        b = b''.join(rnd.choice(pieces) for _ in range(rnd.randint(1, 10)))
        if rnd.random() < 0.3:
            b = bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 12)))
        print('%s\t%s' % (b.hex(), b.decode('utf-8', 'replace').encode().hex()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('tokenizer', nargs='?')
    ap.add_argument('--random', type=int, default=0, help='random cases instead of the designed ones')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--pretok', action='store_true')
    ap.add_argument('--nfc', action='store_true')
    ap.add_argument('--lossy', action='store_true')
    args = ap.parse_args()
    if args.pretok:
        return pretok_cases(args.random or 20, args.seed)
    if args.nfc:
        return nfc_cases(args.seed)
    if args.lossy:
        return lossy_cases(args.seed)
    if not args.tokenizer:
        ap.error('a tokenizer file is needed')
    opener = gzip.open if args.tokenizer.endswith('.gz') else open
    with opener(args.tokenizer, 'rt', encoding='utf-8') as f:
        tok = Tokenizer.from_str(f.read())
    if args.random:
        rnd = random.Random(args.seed)
        cases = [('random%d' % i, rnd.randint(0, 1), random_text(rnd)) for i in range(args.random)]
    else:
        cases = designed_cases()
    out = sys.stdout
    out.write('# Expected Qwen3 token ids from Hugging Face tokenizers %s (tools/gen_tok_fixtures.py).\n'
              % tokenizers.__version__)
    out.write('# name, allow_special, text hex, ids, decoded hex ("-": same as text)\n')
    for name, special, text in cases:
        tok.encode_special_tokens = not special
        ids = tok.encode(text, add_special_tokens=False).ids
        dec = tok.decode(ids, skip_special_tokens=False)
        enc = text.encode('utf-8')
        out.write('%s\t%d\t%s\t%s\t%s\n' % (name, special, enc.hex(), ' '.join(map(str, ids)),
                                            '-' if dec == text else dec.encode('utf-8').hex()))


if __name__ == '__main__':
    main()
