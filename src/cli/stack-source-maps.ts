/**
 * Stack traces that name src/ files, mapped when a stack is formatted instead of when a file loads.
 *
 * Node's own support (process.setSourceMapsEnabled) reads, at load time, the source map of every file
 * that has one and measures every line of that file, character by character. The bundle's chunks
 * that hold ironpool's code also hold the dependencies bundled with it (megabytes of text), so a
 * process paid for that before its first command ran: 16 ms of a poollet's start-up with V8's
 * optimizing compilers, 140 ms without them (a CPU profile of the first 700 ms; bin/run.js
 * says why the poollet runs without). Here nothing is read until a stack is formatted, and then only
 * the maps of the files in its frames, once each.
 *
 * Only files of the bundle's directory are mapped, through the `<file>.map` that scripts/build.ts
 * writes beside each file that keeps a map (src-only-source-maps.ts): a frame in a dependency's code
 * names the bundle's file and line, as before.
 */
import {readFileSync} from 'node:fs'
import {SourceMap} from 'node:module'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

/** A bundle file's map, or null for one without (read once, either way). */
const maps = new Map<string, SourceMap | null>()

function mapOf(file: string): SourceMap | null {
  let map = maps.get(file)
  if (map === undefined) {
    try {
      map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')) as ConstructorParameters<typeof SourceMap>[0])
    } catch {
      map = null
    }
    maps.set(file, map)
  }
  return map
}

/** A call site's location in the bundle, as V8 prints it, and where that is in src/ (undefined: not mapped). */
function mapped(site: NodeJS.CallSite, bundleDir: string): {printed: string; original: string} | undefined {
  const name = site.getFileName()
  const line = site.getLineNumber()
  const column = site.getColumnNumber()
  if (name === undefined || name === null || line === null || column === null) return undefined
  const file = name.startsWith('file:') ? fileURLToPath(name) : name
  if (path.dirname(file) !== bundleDir) return undefined
  const entry = mapOf(file)?.findEntry(line - 1, column - 1)
  if (entry === undefined || !('originalSource' in entry)) return undefined
  const source = entry.originalSource.startsWith('file:') ? fileURLToPath(entry.originalSource) : path.resolve(bundleDir, entry.originalSource)
  return {printed: `${name}:${line}:${column}`, original: `${source}:${entry.originalLine + 1}:${entry.originalColumn + 1}`}
}

/** One frame as V8 prints it, its location replaced by the src/ one where the bundle's map has it. */
export function formatCallSite(site: NodeJS.CallSite, bundleDir: string): string {
  // CallSite's toString() is V8's own frame text (the lint rule does not know the type has one).
  // eslint-disable-next-line @typescript-eslint/no-base-to-string
  const text = site.toString()
  const location = mapped(site, bundleDir)
  if (location === undefined) return text
  const at = text.lastIndexOf(location.printed)
  return at === -1 ? text : text.slice(0, at) + location.original + text.slice(at + location.printed.length)
}

/**
 * From now on, every stack this process formats names src/ files for the frames in bundleDir's files
 * (default: the directory of this module, the bundle's in dist/ironpool/). V8's own layout is kept:
 * the error's first line, then one `    at ...` line per frame.
 */
export function mapStackTraces(bundleDir = path.dirname(fileURLToPath(import.meta.url))): void {
  Error.prepareStackTrace = (error: unknown, sites: NodeJS.CallSite[]) => {
    let header: string
    try {
      header = Error.prototype.toString.call(error)
    } catch {
      header = '<error>'
    }
    return header + sites.map((site) => `\n    at ${formatCallSite(site, bundleDir)}`).join('')
  }
}
