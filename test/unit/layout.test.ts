/**
 * The house rules of src/: no import circle, each room of src/core, src/kube and src/cli (and each room
 * of a room) imports only what its README.md says it may ("May import: ..."), no folder holds more than
 * 16 files of its own, and the README's Layout section names every folder.
 */
import {expect} from 'chai'
import {existsSync, readdirSync, readFileSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const GENERATED = 'src/iri/gen'

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), {withFileTypes: true}).flatMap(entry => {
    const rel = `${dir}/${entry.name}`
    if (entry.isDirectory()) return rel === GENERATED ? [] : sourceFiles(rel)
    return rel.endsWith('.ts') ? [rel] : []
  })
}

// Static, type-only, re-export and dynamic imports alike: a type import is a dependency of the reader.
const IMPORT = /(?:\bfrom|\bimport)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g

/** Every relative import of every file under src/, as repository paths. */
export function importGraph(files: string[], read: (file: string) => string): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  for (const file of files) {
    const targets = [...read(file).matchAll(IMPORT)].map(match => path.posix.normalize(path.posix.join(path.posix.dirname(file), match[1] ?? '')))
    graph.set(file, targets.filter(target => target.startsWith('src/') && !target.startsWith(`${GENERATED}/`)))
  }
  return graph
}

/** The circles of a graph: each strongly connected component of more than one file, or a file that imports itself. */
export function importCircles(graph: Map<string, string[]>): string[][] {
  let next = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const circles: string[][] = []
  const visit = (file: string): void => {
    index.set(file, next)
    low.set(file, next++)
    stack.push(file)
    onStack.add(file)
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target)
        low.set(file, Math.min(low.get(file)!, low.get(target)!))
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file)!, index.get(target)!))
      }
    }
    if (low.get(file) !== index.get(file)) return
    const component: string[] = []
    let member: string | undefined
    do {
      member = stack.pop()!
      onStack.delete(member)
      component.push(member)
    } while (member !== file)
    if (component.length > 1 || (graph.get(file) ?? []).includes(file)) circles.push(component.sort())
  }
  for (const file of graph.keys()) if (!index.has(file)) visit(file)
  return circles
}

/** A room's README.md line `May import: src/core, src/kube/http`: the rooms besides its own it may import. */
function allowedRooms(room: string): string[] | undefined {
  const readme = path.join(ROOT, room, 'README.md')
  if (!existsSync(readme)) return undefined
  const line = readFileSync(readme, 'utf8').split('\n').find(l => l.startsWith('May import:'))
  if (line === undefined) return undefined
  return line.slice('May import:'.length).split(',').map(part => part.trim().split(/\s/)[0] ?? '').filter(part => part.startsWith('src/'))
}

/** A room holds at most this many files of its own; more is a sign it does more than one job. */
const ROOM_LIMIT = 16

/** Each folder under dir (dir included, generated code excluded) with the number of .ts files directly in it. */
function tsFilesPerFolder(dir: string): [string, number][] {
  const entries = readdirSync(path.join(ROOT, dir), {withFileTypes: true})
  const own: [string, number] = [dir, entries.filter(e => e.isFile() && e.name.endsWith('.ts')).length]
  const rooms = entries.filter(e => e.isDirectory() && `${dir}/${e.name}` !== GENERATED).flatMap(e => tsFilesPerFolder(`${dir}/${e.name}`))
  return [own, ...rooms]
}

const roomsOf = (dir: string) => readdirSync(path.join(ROOT, dir), {withFileTypes: true}).filter(e => e.isDirectory()).map(e => `${dir}/${e.name}`)
/** The rooms of dir, and their rooms in turn (src/core/lifecycle/sight is a room of src/core/lifecycle). */
const roomsUnder = (dir: string): string[] => roomsOf(dir).flatMap(room => [room, ...roomsUnder(room)])

describe('layout of src/', () => {
  const files = sourceFiles('src')
  const graph = importGraph(files, file => readFileSync(path.join(ROOT, file), 'utf8'))

  it('finds the imports it checks (the graph is not empty, and src/core/index.ts reaches the rooms)', () => {
    expect(graph.get('src/core/index.ts')).to.include('src/core/lifecycle/pool-lifecycle.ts')
    expect(graph.get('src/kube/watch/list-watch-source.ts')).to.include('src/kube/watch/watch-request.ts')
  })

  it('has no import circle, type imports included', () => {
    expect(importCircles(graph).map(circle => circle.join(' <-> '))).to.deep.equal([])
  })

  it('the circle finder finds a circle of two files and one of a file with itself', () => {
    const circles = importCircles(new Map([['a', ['b']], ['b', ['a', 'c']], ['c', []], ['d', ['d']]]))
    expect(circles).to.deep.equal([['a', 'b'], ['d']])
  })

  const rooms = ['src/core', ...roomsUnder('src/core'), ...roomsUnder('src/kube'), 'src/cli', ...roomsUnder('src/cli')]
  for (const room of rooms) {
    it(`${room} imports only its own files and what its README.md allows`, () => {
      const allowed = allowedRooms(room)
      expect(allowed, `${room}/README.md has no "May import:" line`).to.not.equal(undefined)
      const mayImport = new Set([room, ...(allowed ?? [])])
      const strays: string[] = []
      for (const [file, targets] of graph) {
        if (path.posix.dirname(file) !== room) continue
        // The engine's public face re-exports its rooms; it is the one root file that may.
        if (file === 'src/core/index.ts') continue
        for (const target of targets) if (!mayImport.has(path.posix.dirname(target))) strays.push(`${file} -> ${target}`)
      }
      expect(strays).to.deep.equal([])
    })
  }

  it('no folder of src/ holds more than 16 files of its own', () => {
    const crowded = tsFilesPerFolder('src').filter(([, count]) => count > ROOM_LIMIT)
    expect(crowded.map(([folder, count]) => `${folder}: ${count} files (at most ${ROOM_LIMIT}; split it into rooms)`)).to.deep.equal([])
  })

  it('the file-count rule counts a folder\'s own .ts files, not its rooms\'', () => {
    const counts = new Map(tsFilesPerFolder('src'))
    expect(counts.get('src/cli')).to.equal(readdirSync(path.join(ROOT, 'src/cli')).filter(name => name.endsWith('.ts')).length)
    expect(counts.get('src/cli/completion')).to.equal(4)
  })

  it("the README's Layout section names every folder of src/ and every room of src/core, src/kube and src/cli (rooms' rooms too)", () => {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8')
    const layout = /## Layout\n+```\n([\s\S]*?)```/.exec(readme)?.[1] ?? ''
    const named = new Set([...layout.matchAll(/^\s*(src\/[\w/-]+\/)/gm)].map(m => m[1] ?? ''))
    const folders = [...roomsOf('src'), ...roomsUnder('src/core'), ...roomsUnder('src/kube'), ...roomsUnder('src/cli')].filter(f => f !== GENERATED && f !== 'src/iri/proto')
    expect(folders.filter(folder => !named.has(`${folder}/`))).to.deep.equal([])
    expect([...named].filter(folder => !existsSync(path.join(ROOT, folder)))).to.deep.equal([])
  })
})
