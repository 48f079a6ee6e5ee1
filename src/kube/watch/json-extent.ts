/**
 * Reading the shape of JSON text without parsing it: where a value ends, the plain fields of an object,
 * the extent of each item of a list. The list+watch cache uses it to measure each object of a list page
 * (JSON.parse keeps no sizes) and to name an object from the first bytes of an answer too large to
 * parse. A scan jumps over string contents with indexOf, so it costs a fraction of JSON.parse.
 *
 * The text is what kube-apiserver wrote: valid JSON, maybe cut short. A value cut short ends at the
 * end of the text; nothing here throws.
 */

const QUOTE = 0x22
const BACKSLASH = 0x5c

/** The index just past the string whose opening quote is at text[start] (text.length when cut short). */
function skipString(text: string, start: number): number {
  let i = start + 1
  for (;;) {
    const quote = text.indexOf('"', i)
    if (quote === -1) return text.length
    let backslashes = 0
    for (let j = quote - 1; j > start && text.charCodeAt(j) === BACKSLASH; j--) backslashes++
    if (backslashes % 2 === 0) return quote + 1
    i = quote + 1
  }
}

/** The index just past the JSON value that begins at text[start] (whitespace before it skipped). */
export function skipValue(text: string, start: number): number {
  let i = skipSpace(text, start)
  const first = text.charCodeAt(i)
  if (first === QUOTE) return skipString(text, i)
  if (first !== 0x7b && first !== 0x5b) {
    // A number, true, false or null: up to the next delimiter.
    while (i < text.length && !',}] \t\r\n'.includes(text[i]!)) i++
    return i
  }
  let depth = 0
  while (i < text.length) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      i = skipString(text, i)
      continue
    }
    if (c === 0x7b || c === 0x5b) depth++
    else if (c === 0x7d || c === 0x5d) {
      depth--
      if (depth === 0) return i + 1
    }
    i++
  }
  return text.length
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && ' \t\r\n'.includes(text[i]!)) i++
  return i
}

/** A field of an object: a string or number as its value, anything else as where its value begins. */
export type Field = string | number | {at: number}

/**
 * The fields of the object that opens at text[start], as far as the text goes: strings and numbers by
 * value; objects, arrays, booleans and null by the index where they begin. With `until`, stops at that
 * key when its value is an object or array.
 */
export function fieldsOf(text: string, start: number, until?: string): Map<string, Field> {
  const fields = new Map<string, Field>()
  let i = skipSpace(text, start)
  if (text[i] !== '{') return fields
  i++
  for (;;) {
    i = skipSpace(text, i)
    if (text[i] === ',') i = skipSpace(text, i + 1)
    if (text[i] !== '"') return fields
    const keyEnd = skipString(text, i)
    if (keyEnd >= text.length) return fields
    const key = parse(text.slice(i, keyEnd))
    i = skipSpace(text, keyEnd)
    if (text[i] !== ':') return fields
    const valueAt = skipSpace(text, i + 1)
    // The caller wants where this one begins, not what follows it: no need to skip over it.
    if (until !== undefined && key === until && (text[valueAt] === '{' || text[valueAt] === '[')) {
      fields.set(until, {at: valueAt})
      return fields
    }
    const valueEnd = skipValue(text, valueAt)
    if (valueEnd >= text.length) {
      // Cut short: an object or array still says where it begins; a scalar cut short says nothing.
      if (typeof key === 'string' && (text[valueAt] === '{' || text[valueAt] === '[')) fields.set(key, {at: valueAt})
      return fields
    }
    const value = text[valueAt] === '"' || /[-\d]/.test(text[valueAt] ?? '') ? parse(text.slice(valueAt, valueEnd)) : undefined
    if (typeof key === 'string') fields.set(key, typeof value === 'string' || typeof value === 'number' ? value : {at: valueAt})
    i = valueEnd
  }
}

function parse(json: string): unknown {
  try {
    return JSON.parse(json) as unknown
  } catch {
    return undefined
  }
}

/**
 * The length of each item of the list object's `items` array, in order, or undefined when the text has
 * none. Lengths are in UTF-16 code units, the bytes of the ASCII that API objects are made of.
 */
export function itemLengths(text: string): number[] | undefined {
  const items = fieldsOf(text, 0, 'items').get('items')
  if (typeof items !== 'object' || text[items.at] !== '[') return undefined
  const lengths: number[] = []
  let i = skipSpace(text, items.at + 1)
  while (i < text.length && text[i] !== ']') {
    const end = skipValue(text, i)
    lengths.push(end - i)
    i = skipSpace(text, end)
    if (text[i] === ',') i = skipSpace(text, i + 1)
  }
  return lengths
}

/** The name, namespace and resourceVersion of the object that opens at text[start], as far as the text goes. */
export function metadataOf(text: string, start: number): {name?: string; namespace?: string; resourceVersion?: string} {
  const metadata = fieldsOf(text, start).get('metadata')
  if (typeof metadata !== 'object') return {}
  const fields = fieldsOf(text, metadata.at)
  const string = (key: string) => {
    const value = fields.get(key)
    return typeof value === 'string' ? value : undefined
  }
  return {name: string('name'), namespace: string('namespace'), resourceVersion: string('resourceVersion')}
}
