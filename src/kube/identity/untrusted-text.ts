/**
 * Requester-controlled text made fit for a log line or an Event message: bounded, and with nothing a
 * terminal would act on. A CSR's subject is whatever its requester wrote into the DER (a 1 MB CN, an
 * ESC sequence, a U+202E that reverses what follows), and `kubectl describe csr` prints an Event's
 * message raw; so every such value is cut to a bound that says how long it was, and each control
 * character (C0, DEL, C1), bidi control, line or paragraph separator and lone surrogate is written as an
 * escape (`\x1b`, `\u202e`). A backslash is doubled, so that an escape in the output always means an
 * escaped character, never text the requester typed. Letters of any script pass unchanged.
 */

/**
 * Characters of one requester-controlled value in a message, before the `…(N characters)` that says it
 * was cut: 256, as issue 29 asks (a pool name is at most 253, so a poollet's own CN is never cut).
 */
export const UNTRUSTED_VALUE_MAX = 256

/** Kubernetes refuses an Event whose message (note) is longer than this many bytes (NoteLengthLimit). */
export const EVENT_MESSAGE_MAX = 1024

/** Bidi controls (ALM, LRM, RLM, LRE..RLO, LRI..PDI) and the line and paragraph separators. */
function isFormatControl(code: number): boolean {
  return code === 0x061c || code === 0x200e || code === 0x200f || (code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069) || code === 0x2028 || code === 0x2029
}

/** One code point as it may appear in a message. */
function escapeCodePoint(char: string): string {
  const code = char.codePointAt(0) ?? 0
  if (char === '\\') return '\\\\'
  if (code <= 0x1f || (code >= 0x7f && code <= 0x9f)) return `\\x${code.toString(16).padStart(2, '0')}`
  if (isFormatControl(code) || (code >= 0xd800 && code <= 0xdfff)) return `\\u${code.toString(16).padStart(4, '0')}`
  return char
}

/** The `…(N characters)` that ends a cut value: N is the length of the whole value, in characters (code points). */
function cutNote(length: number): string {
  return `…(${length} characters)`
}

/**
 * `value` escaped (see above) and at most `max` characters long, escapes counted as written and never
 * split; when it is cut, `…(N characters)` follows, N the length of the whole value. Pure.
 */
export function quoteUntrusted(value: string, max: number = UNTRUSTED_VALUE_MAX): string {
  let out = ''
  let kept = 0
  let total = 0
  let cut = false
  for (const char of value) {
    total++
    if (cut) continue
    const escaped = escapeCodePoint(char)
    if (kept + escaped.length > max) {
      cut = true
      continue
    }
    out += escaped
    kept += escaped.length
  }
  return cut ? out + cutNote(total) : out
}

/**
 * A whole message at most `max` bytes of UTF-8 (kube-apiserver measures an Event's message so, as Go's
 * len), cut with the same `…(N characters)` note when longer, never inside a character; it does not
 * escape (its requester values are, by quoteUntrusted).
 */
export function boundMessage(message: string, max: number = EVENT_MESSAGE_MAX): string {
  if (Buffer.byteLength(message, 'utf8') <= max) return message
  const note = cutNote([...message].length)
  let room = max - Buffer.byteLength(note, 'utf8')
  let out = ''
  for (const char of message) {
    room -= Buffer.byteLength(char, 'utf8')
    if (room < 0) break
    out += char
  }
  return out + note
}
