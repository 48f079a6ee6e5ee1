/**
 * Source maps that map ironpool's own code only. Node parses the source map of every file it loads
 * (when source maps are on) and keeps it decoded: esbuild's maps of the bundle's dependencies cost the
 * CLI 23 MiB and 80 ms before any command ran, and the poollet far more. Stack traces need to name
 * src/ files, not client-node's; so each map keeps the segments whose source is outside node_modules
 * (frames in a dependency then name the bundle's file and line), and a file that keeps none loses its
 * map and its sourceMappingURL comment, so Node reads nothing for it.
 */
import {readdir, readFile, rm, writeFile} from 'node:fs/promises'
import path from 'node:path'

interface SourceMap {
  version: 3
  sources: string[]
  names: string[]
  mappings: string
  sourcesContent?: (string | null)[]
  sourceRoot?: string
  file?: string
}

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
const DIGIT = new Map([...BASE64].map((c, i) => [c, i]))

/** The base64 VLQ numbers of one segment. */
function decodeSegment(text: string): number[] {
  const values: number[] = []
  let value = 0
  let shift = 0
  for (const char of text) {
    const digit = DIGIT.get(char)
    if (digit === undefined) throw new Error(`bad source map character ${JSON.stringify(char)}`)
    value += (digit & 31) << shift
    if (digit & 32) {
      shift += 5
    } else {
      values.push(value & 1 ? -(value >>> 1) : value >>> 1)
      value = 0
      shift = 0
    }
  }
  return values
}

function encodeValue(n: number): string {
  let vlq = n < 0 ? (-n << 1) | 1 : n << 1
  let out = ''
  do {
    let digit = vlq & 31
    vlq >>>= 5
    if (vlq > 0) digit |= 32
    out += BASE64[digit]
  } while (vlq > 0)
  return out
}

/** The map with only the segments whose source `keep` accepts; undefined when none is left. */
export function filterSourceMap(map: SourceMap, keep: (source: string) => boolean): SourceMap | undefined {
  const newIndex = new Map<number, number>()
  const sources: string[] = []
  map.sources.forEach((source, i) => {
    if (keep(source)) {
      newIndex.set(i, sources.length)
      sources.push(source)
    }
  })
  if (sources.length === 0) return undefined
  // Absolute source fields carry over lines in the input; the output's restart with each kept segment.
  let src = 0
  let srcLine = 0
  let srcCol = 0
  let outSrc = 0
  let outLine = 0
  let outCol = 0
  const lines = map.mappings.split(';').map((line) => {
    let genCol = 0
    let outGenCol = 0
    let open = false
    const segments: string[] = []
    for (const segment of line === '' ? [] : line.split(',')) {
      const fields = decodeSegment(segment)
      genCol += fields[0] ?? 0
      let target: number | undefined
      if (fields.length >= 4) {
        src += fields[1]!
        srcLine += fields[2]!
        srcCol += fields[3]!
        target = newIndex.get(src)
      }
      if (target === undefined) {
        // Unmapped, or a dependency's code after ironpool's on this line: end the kept mapping here.
        if (open) {
          segments.push(encodeValue(genCol - outGenCol))
          outGenCol = genCol
          open = false
        }
        continue
      }
      segments.push(encodeValue(genCol - outGenCol) + encodeValue(target - outSrc) + encodeValue(srcLine - outLine) + encodeValue(srcCol - outCol))
      outGenCol = genCol
      outSrc = target
      outLine = srcLine
      outCol = srcCol
      open = true
    }
    return segments.join(',')
  })
  return {version: 3, sources, names: [], mappings: lines.join(';')}
}

const isOwnSource = (source: string) => !source.split(/[\\/]/).includes('node_modules')

/** Rewrites every .js.map in dir to ironpool's sources; drops the maps (and their comments) left empty. */
export async function keepOwnSourceMaps(dir: string): Promise<{kept: number; dropped: number}> {
  let kept = 0
  let dropped = 0
  for (const name of await readdir(dir)) {
    if (!name.endsWith('.js.map')) continue
    const mapFile = path.join(dir, name)
    const jsFile = mapFile.slice(0, -'.map'.length)
    const filtered = filterSourceMap(JSON.parse(await readFile(mapFile, 'utf8')) as SourceMap, isOwnSource)
    if (filtered === undefined) {
      const js = await readFile(jsFile, 'utf8')
      await writeFile(jsFile, js.replace(/\n\/\/# sourceMappingURL=[^\n]*\n?$/, '\n'))
      await rm(mapFile)
      dropped++
    } else {
      await writeFile(mapFile, JSON.stringify(filtered))
      kept++
    }
  }
  return {kept, dropped}
}
