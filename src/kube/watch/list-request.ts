/**
 * One page of a list, read so that no object can make the view fail (issue 29): the answer is read up to
 * a cap; past it the page is refused with an OversizedPageError (the cache asks again for half as many
 * objects), and a page of one object read through keeps its first and last bytes, enough to name the
 * object and to say where the list goes on without it. A page within the cap is measured item by item
 * (json-extent.ts): an object over the per-object cap is taken out of the page and reported.
 *
 * Why not api-request.ts: it reads an answer whole or fails, and keeps no sizes; the list needs both.
 * Authentication, the connection pool and the deadline are the same (authenticatedRequest, deadlineSignal).
 */
import type {Readable} from 'node:stream'
import type {KubeConfig} from '@kubernetes/client-node'
import {ApiAnswerError, ApiStatusError, apiUrl, authenticatedRequest} from '../http/api-request.ts'
import {deadlineSignal} from '../http/request-deadline.ts'
import {fieldsOf, itemLengths, metadataOf, skipValue} from './json-extent.ts'

/** An object left out of the view because it alone is larger than the cap of one object. */
export interface OversizedObject {
  name?: string
  namespace?: string
  resourceVersion?: string
  /** Its size on the wire, bytes (at least this many). */
  bytes: number
  /** The cap it is over, bytes. */
  limitBytes: number
}

/** A page of a list, with the objects taken out of it for their size. */
export interface ListPage<T> {
  items: T[]
  metadata?: {resourceVersion?: string; continue?: string}
  oversized?: OversizedObject[]
}

/** A page larger than the answer cap. For a page of one object, `skip` says how to go on without it, if the answer said so. */
export class OversizedPageError extends Error {
  override readonly name = 'OversizedPageError'
  readonly limit: number
  readonly bytes: number
  readonly skip: {continue?: string; resourceVersion?: string; object: OversizedObject} | undefined
  constructor(limit: number, bytes: number, limitBytes: number, skip?: OversizedPageError['skip']) {
    super(`a list page of ${limit} object${limit === 1 ? '' : 's'} is larger than ${limitBytes} bytes`)
    this.limit = limit
    this.bytes = bytes
    this.skip = skip
  }
}

/** What a page of one object keeps of an answer past the cap: its first and its last bytes. */
const EDGE_BYTES = 64 * 1024
/** A page of one object is read through to its end to find where the list goes on, up to this many bytes. */
const READ_THROUGH_BYTES = 64 * 1024 * 1024

export interface PageRequest {
  path: string
  query: Record<string, string | number | undefined>
  timeoutMs: number
  /** The largest answer parsed. */
  maxAnswerBytes: number
  /** The largest object kept; larger ones are taken out of the page. */
  maxObjectBytes: number
}

type Read = {text: string} | {bytes: number; head: string; tail: string}

/** The body as text up to limitBytes; past it, with readThrough, its first and last bytes (else nothing). */
function readBounded(body: Readable, limitBytes: number, readThrough: boolean): Promise<Read> {
  return new Promise((resolve, reject) => {
    let chunks: Buffer[] = []
    let length = 0
    let head: Buffer | undefined
    let tail: Buffer[] = []
    let tailLength = 0
    const onData = (chunk: Buffer) => {
      length += chunk.length
      if (head === undefined && length <= limitBytes) {
        chunks.push(chunk)
        return
      }
      if (head === undefined) {
        if (!readThrough) {
          body.off('data', onData)
          body.destroy()
          resolve({bytes: length, head: '', tail: ''})
          return
        }
        const all = Buffer.concat([...chunks, chunk])
        chunks = []
        head = all.subarray(0, EDGE_BYTES)
        tail = [all.subarray(Math.max(0, all.length - EDGE_BYTES))]
        tailLength = tail[0]!.length
      } else {
        tail.push(chunk)
        tailLength += chunk.length
        while (tail.length > 1 && tailLength - tail[0]!.length >= EDGE_BYTES) tailLength -= tail.shift()!.length
      }
      if (length > READ_THROUGH_BYTES) {
        body.off('data', onData)
        body.destroy()
        resolve({bytes: length, head: head.toString('utf8'), tail: ''})
      }
    }
    body.on('data', onData)
    body.once('end', () => {
      if (head === undefined) resolve({text: Buffer.concat(chunks).toString('utf8')})
      else {
        const last = Buffer.concat(tail)
        resolve({bytes: length, head: head.toString('utf8'), tail: last.subarray(Math.max(0, last.length - EDGE_BYTES)).toString('utf8')})
      }
    })
    body.once('error', reject)
    body.once('close', () => {
      if (!body.readableEnded) reject(Object.assign(new Error('Premature close'), {code: 'ERR_STREAM_PREMATURE_CLOSE'}))
    })
  })
}

/**
 * The list's own metadata from the first or the last bytes of its answer: built-in lists (Leases) write
 * it before the items, custom resources' lists (keys sorted) after them. Undefined when neither holds
 * it whole: then nobody can say where the list goes on.
 */
export function listMetadataOf(head: string, tail: string): {continue?: string; resourceVersion?: string} | undefined {
  const fromHead = fieldsOf(head, 0).get('metadata')
  if (typeof fromHead === 'object' && skipValue(head, fromHead.at) < head.length) return stringFields(head, fromHead.at)
  const key = '"metadata":'
  const at = tail.lastIndexOf(key)
  if (at === -1) return undefined
  const start = at + key.length
  const end = skipValue(tail, start)
  // The list's metadata is its last field: only the list's closing brace may follow it.
  if (end >= tail.length || tail.slice(end).trim() !== '}') return undefined
  return stringFields(tail, start)
}

function stringFields(text: string, at: number): {continue?: string; resourceVersion?: string} {
  const fields = fieldsOf(text, at)
  const value = (key: string) => {
    const v = fields.get(key)
    return typeof v === 'string' && v !== '' ? v : undefined
  }
  return {continue: value('continue'), resourceVersion: value('resourceVersion')}
}

/** The first item's name, namespace and resourceVersion, from the first bytes of a list's answer. */
function firstItemOf(head: string): Omit<OversizedObject, 'bytes' | 'limitBytes'> {
  const items = fieldsOf(head, 0).get('items')
  if (typeof items !== 'object') return {}
  return metadataOf(head, items.at + 1)
}

/**
 * Splits a parsed page into the objects kept and those over maxObjectBytes, by each item's length in
 * the text. A page no longer than the cap cannot hold an object over it, and is not measured.
 */
export function splitOversized<T extends {metadata?: {name?: string; namespace?: string; resourceVersion?: string}}>(text: string, items: T[], maxObjectBytes: number): {kept: T[]; oversized: OversizedObject[]} {
  if (text.length <= maxObjectBytes || items.length === 0) return {kept: items, oversized: []}
  const lengths = itemLengths(text)
  // The scan and the parse disagree only on text that is not what kube-apiserver writes: keep all.
  if (lengths === undefined || lengths.length !== items.length) return {kept: items, oversized: []}
  const kept: T[] = []
  const oversized: OversizedObject[] = []
  items.forEach((item, i) => {
    const bytes = lengths[i]!
    if (bytes <= maxObjectBytes) kept.push(item)
    else oversized.push({name: item?.metadata?.name, namespace: item?.metadata?.namespace, resourceVersion: item?.metadata?.resourceVersion, bytes, limitBytes: maxObjectBytes})
  })
  return {kept, oversized}
}

function decode(text: string): unknown {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return text
  }
}

/** One page: limit objects from the continue token. */
export async function listPage<T extends {metadata?: {name?: string; namespace?: string; resourceVersion?: string}}>(kc: KubeConfig, request: PageRequest): Promise<ListPage<T>> {
  const url = apiUrl(kc, request.path, request.query)
  const {headers, dispatcher} = await authenticatedRequest(kc, url, 'GET', {Accept: 'application/json'})
  const signal = deadlineSignal(request.timeoutMs)
  const response = await dispatcher.request({origin: url.origin, path: url.pathname + url.search, method: 'GET', headers, signal, headersTimeout: request.timeoutMs, bodyTimeout: request.timeoutMs})
  const limit = Number(request.query.limit ?? 0)
  const read = await readBounded(response.body, request.maxAnswerBytes, limit === 1 && response.statusCode === 200)
  if (!('text' in read)) {
    if (response.statusCode < 200 || response.statusCode > 299) throw new ApiStatusError(response.statusCode, `answer larger than ${request.maxAnswerBytes} bytes`)
    const list = limit === 1 ? listMetadataOf(read.head, read.tail) : undefined
    const skip = list && {...list, object: {...firstItemOf(read.head), bytes: read.bytes, limitBytes: request.maxAnswerBytes}}
    throw new OversizedPageError(limit, read.bytes, request.maxAnswerBytes, skip)
  }
  if (response.statusCode < 200 || response.statusCode > 299) throw new ApiStatusError(response.statusCode, decode(read.text))
  let page: ListPage<T>
  try {
    page = JSON.parse(read.text) as ListPage<T>
  } catch (error) {
    throw new ApiAnswerError(`GET ${url.pathname}: HTTP ${response.statusCode} answer is not valid JSON: ${(error as Error).message}`)
  }
  const {kept, oversized} = splitOversized(read.text, page.items ?? [], request.maxObjectBytes)
  page.items = kept
  if (oversized.length > 0) page.oversized = oversized
  return page
}
