/** The first character a terminal would act on (C0, DEL, C1, bidi control, separator), or undefined. */
export function rawControl(text: string): string | undefined {
  return [...text].find((c) => {
    const code = c.codePointAt(0) ?? 0
    return code <= 0x1f || (code >= 0x7f && code <= 0x9f) || code === 0x061c || code === 0x200e || code === 0x200f || (code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069) || code === 0x2028 || code === 0x2029
  })
}
