#!/usr/bin/env node
/* tests/reference/pretok_reference.js — expected token ids for every pre-tokenizer split,
 * from Hugging Face's own tokenizer (the npm package `tokenizers`, the Rust library's node
 * bindings; its Split runs Oniguruma, as the Python package does).
 *
 *   npm install --prefix /tmp/hfref tokenizers@0.23.2
 *   NODE_PATH=/tmp/hfref/node_modules node tests/reference/pretok_reference.js \
 *       build/tests/engine/pretok-table ../shared/golden/tokenizer tests/engine/pretok
 *
 * Inputs: the engine's pre-tokenizer table (printed as JSON by pretok-table, so the
 * reference uses exactly the regexes the engine runs) and the 46 strings of llama.cpp's
 * golden tokenizer inputs; to them are added strings chosen for the splits: digit runs,
 * CJK, kana, Hangul, Thai, Devanagari, Arabic digits, emoji sequences, white-space runs,
 * contractions in both cases (and U+017F), case changes inside words, decomposed accents.
 *
 * Output (OUTDIR):
 *  - texts.json: the strings;
 *  - FAMILY.tokenizer.json for each distinct (regex list, NFC, ignore_merges) of the table
 *    ("families", named after their first name): a byte-level BPE whose pre_tokenizer is a
 *    Sequence of Split(regex, Isolated) and ByteLevel(use_regex: false), normalizer NFC
 *    where the names have it; its merges are learned here (a plain BPE trainer: the most
 *    frequent pair, ties by text, 300 merges) over the strings split by that very
 *    pre-tokenizer, so the merges meet the word boundaries;
 *  - hf-*.tokenizer.json (+ hf-*.tokenizer_config.json): tokenizer.json files shaped as real
 *    models write them (GPT-2's ByteLevel with its regex; SmolLM's Digits + ByteLevel;
 *    Llama 3's and Qwen2's Split + ByteLevel; DeepSeek-V3's Split list with literal CJK),
 *    for the importer's name mapping;
 *  - expected.json: {"families": {FAMILY: {"names": [...], "ids": [[...], ...]}},
 *                    "hf": {NAME: {"pre": EXPECTED_NAME, "ids": [[...], ...]}}},
 *    ids from encode(text, add_special_tokens = false), one list per string.
 * tests/engine/test-pretok.c checks the engine against these files.
 */
'use strict';
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');
const { Tokenizer } = require('tokenizers');

const [tableExe, goldenDir, outDir] = process.argv.slice(2);
if (!tableExe || !goldenDir || !outDir) {
  console.error('usage: pretok_reference.js PRETOK_TABLE_EXE GOLDEN_TOKENIZER_DIR OUTDIR');
  process.exit(2);
}

const N_MERGES = 300;
const table = JSON.parse(execFileSync(tableExe, { encoding: 'utf8' }));

/* ---- the strings ---- */
const SEP = '\n__ggml_vocab_test__\n';
const golden = fs.readFileSync(path.join(goldenDir, 'ggml-vocab-gpt-2.gguf.inp'), 'utf8')
  .split(SEP).slice(0, -1);
const extra = [
  '1', '12', '123', '1234', '12345', '123456', '1234567890123', '3.14159 and 2,718,281',
  'x1y22z333w4444', '٣٤٥ and ١٢٣٤ and ½ ² Ⅻ', '0x1F600 == 128512',
  '我爱北京天安门。中文，標點！', '日本語のテキストとカタカナ、ｶﾀｶﾅ', '한국어 텍스트입니다 ㄱㄴ',
  'ｆｕｌｌｗｉｄｔｈ　ＡＢＣ１２３', 'สวัสดีครับ ภาษาไทย', 'नमस्ते दुनिया। हिंदी', 'مرحبا بالعالم ۔ ،',
  '🦙 llama 🚀🚀 👨‍👩‍👧 ❤️', '   ', '\t\t x', '\n\n\n', ' \n \n', 'a    b', 'trailing   ',
  ' '.repeat(40) + 'x', ' '.repeat(600), '\r\n\r\nx\r\n', '\u00a0\u2003x\u3000y',
  "I'm you're we've they'll he'd it's I'M YOU'RE WE'VE 'S", "'ſ ſ's don’t",
  'HTTPServer getHTTPResponse CamelCaseWord', 'aÉb ÉCOLE école ǅungla ΣΊΣΥΦΟΣ',
  'cafe\u0301 e\u0301le\u0300ve A\u030a \u1100\u1161\u11a8', 'def f(x):\n    return x**2  # c\n',
  'if (a<=b && c!=d) { x += 1; } // $y ^ ~z | `q`', 'foo_bar/baz.txt e-mail@example.com',
  'URL: https://x.y/z?q=1&r=2', '<sentinel:12> IMGIMGABZ IMGIMGABCDEZ', '...!!!???–—…',
  '1'.repeat(40), 'word ' + '9'.repeat(7) + ' end',
];
const texts = golden.concat(extra);

/* extra training text, so merges beyond the test strings exist */
const corpus = [
  'The quick brown fox jumps over the lazy dog. It was the best of times, it was the worst ',
  'of times; numbers like 1024, 2048 and 65536 appear in code: for (int i = 0; i < n; i++) ',
  '{ sum += a[i]; } Der schnelle braune Fuchs springt. Le renard brun saute. 快速的棕色狐狸 ',
  '跳过了懒狗。素早い茶色の狐。빠른 갈색 여우가 뛰어넘는다. Быстрая лиса прыгает.',
].join('');

/* ---- a byte-level BPE tokenizer.json ---- */
function bytesToUnicode () {
  const bs = [];
  for (let b = 0x21; b <= 0x7e; b++) bs.push(b);
  for (let b = 0xa1; b <= 0xac; b++) bs.push(b);
  for (let b = 0xae; b <= 0xff; b++) bs.push(b);
  const cs = bs.slice();
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bs.includes(b)) { bs.push(b); cs.push(256 + n); n++; }
  }
  const map = new Array(256);
  bs.forEach((b, i) => { map[b] = String.fromCodePoint(cs[i]); });
  return map;
}
const ALPHABET = bytesToUnicode();

function tokenizerJson (normalizer, preTokenizer, vocab, merges, ignoreMerges) {
  return {
    version: '1.0', truncation: null, padding: null, added_tokens: [],
    normalizer, pre_tokenizer: preTokenizer,
    post_processor: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true,
                      use_regex: false },
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true,
               use_regex: false },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null,
             end_of_word_suffix: null, fuse_unk: false, byte_fallback: false,
             ignore_merges: ignoreMerges, vocab, merges },
  };
}

function baseVocab () {
  const vocab = {};
  ALPHABET.forEach((c, b) => { vocab[c] = b; });
  return vocab;
}

/* Split every string with the tokenizer's own normalizer and pre-tokenizer. */
function words (tk, strings) {
  const counts = new Map();
  const norm = tk.getNormalizer();
  const pre = tk.getPreTokenizer();
  for (const s of strings) {
    const t = norm ? norm.normalizeString(s) : s;
    for (const [w] of pre.preTokenizeString(t)) counts.set(w, (counts.get(w) || 0) + 1);
  }
  return counts;
}

/* A plain BPE trainer: merge the most frequent adjacent pair (ties: smaller "a b"). */
function train (counts, nMerges) {
  const ws = [...counts.entries()].map(([w, c]) => ({ syms: [...w], c }));
  const merges = [];
  for (let m = 0; m < nMerges; m++) {
    const pairs = new Map();
    for (const { syms, c } of ws) {
      for (let i = 0; i + 1 < syms.length; i++) {
        const k = syms[i] + ' ' + syms[i + 1];
        pairs.set(k, (pairs.get(k) || 0) + c);
      }
    }
    let best = null, bestN = 1;
    for (const [k, n] of pairs) {
      if (n > bestN || (n === bestN && best !== null && k < best)) { best = k; bestN = n; }
    }
    if (best === null) break;
    const [a, b] = best.split(' ');
    merges.push([a, b]);
    for (const w of ws) {
      const out = [];
      for (let i = 0; i < w.syms.length; i++) {
        if (i + 1 < w.syms.length && w.syms[i] === a && w.syms[i + 1] === b) {
          out.push(a + b); i++;
        } else out.push(w.syms[i]);
      }
      w.syms = out;
    }
  }
  return merges;
}

async function build (name, normalizer, preTokenizer, ignoreMerges) {
  const probe = Tokenizer.fromString(JSON.stringify(
    tokenizerJson(normalizer, preTokenizer, baseVocab(), [], ignoreMerges)));
  const merges = train(words(probe, texts.concat([corpus])), N_MERGES);
  const vocab = baseVocab();
  let id = 256;
  for (const [a, b] of merges) if (!(a + b in vocab)) vocab[a + b] = id++;
  const json = tokenizerJson(normalizer, preTokenizer, vocab, merges, ignoreMerges);
  fs.writeFileSync(path.join(outDir, name + '.tokenizer.json'), JSON.stringify(json) + '\n');
  const tk = Tokenizer.fromString(JSON.stringify(json));
  const ids = [];
  for (const t of texts) {
    const enc = await tk.encode(t, null, { addSpecialTokens: false });
    ids.push(enc.getIds());
  }
  return ids;
}

const BYTE_LEVEL = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true,
                     use_regex: false };
const split = (r) => ({ type: 'Split', pattern: { Regex: r }, behavior: 'Isolated',
                        invert: false });

async function main () {
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(path.join(outDir, 'texts.json'), JSON.stringify(texts, null, 0) + '\n');
  const expected = { families: {}, hf: {} };

  /* one tokenizer per family of the table */
  const families = new Map();
  for (const row of table) {
    if (row.refused) continue;
    const key = JSON.stringify([row.regexes, row.nfc, row.ignore_merges]);
    if (!families.has(key)) families.set(key, { row, names: [] });
    families.get(key).names.push(row.name);
  }
  for (const { row, names } of families.values()) {
    const pre = { type: 'Sequence', pretokenizers: row.regexes.map(split).concat([BYTE_LEVEL]) };
    const ids = await build(row.name, row.nfc ? { type: 'NFC' } : null, pre, row.ignore_merges);
    expected.families[row.name] = { names, ids };
  }

  /* tokenizer.json files shaped as published models write them */
  const llama3Regex = table.find((r) => r.name === 'llama-bpe').regexes[0];
  const qwen2Regex = table.find((r) => r.name === 'qwen2').regexes[0];
  const ds3 = table.find((r) => r.name === 'deepseek-v3').regexes;
  const hf = [
    { name: 'hf-gpt2', pre: 'gpt-2', normalizer: null,
      pt: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true } },
    { name: 'hf-smollm', pre: 'smollm', normalizer: null,
      config: { clean_up_tokenization_spaces: false },
      pt: { type: 'Sequence', pretokenizers: [
        { type: 'Digits', individual_digits: true },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true }] } },
    { name: 'hf-llama3', pre: 'llama-bpe', normalizer: null, ignoreMerges: true,
      pt: { type: 'Sequence', pretokenizers: [split(llama3Regex), BYTE_LEVEL] } },
    { name: 'hf-qwen2', pre: 'qwen2', normalizer: { type: 'NFC' },
      config: { clean_up_tokenization_spaces: false },
      pt: { type: 'Sequence', pretokenizers: [split(qwen2Regex), BYTE_LEVEL] } },
    { name: 'hf-deepseek-v3', pre: 'deepseek-v3', normalizer: null,
      config: { clean_up_tokenization_spaces: false },
      /* the CJK run as the model's file writes it: literal characters */
      pt: { type: 'Sequence', pretokenizers: [
        split(ds3[0]), split('[一-龥぀-ゟ゠-ヿ]+'), split(ds3[2]), BYTE_LEVEL] } },
  ];
  for (const h of hf) {
    const ids = await build(h.name, h.normalizer, h.pt, !!h.ignoreMerges);
    if (h.config) {
      fs.writeFileSync(path.join(outDir, h.name + '.tokenizer_config.json'),
                       JSON.stringify(h.config) + '\n');
    }
    expected.hf[h.name] = { pre: h.pre, ids };
  }
  fs.writeFileSync(path.join(outDir, 'expected.json'), JSON.stringify(expected) + '\n');
  console.log(`${texts.length} strings, ${families.size} families, ${hf.length} model-shaped files`);
}

main().catch((e) => { console.error(e); process.exit(1); });
