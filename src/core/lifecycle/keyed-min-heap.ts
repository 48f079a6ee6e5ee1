/**
 * A binary min-heap of keys ordered by a numeric priority, with an index from key to slot so that a
 * key's priority can be changed or the key removed in O(log n). The deadline queue keeps one entry per
 * pool in it; a Map beside the arrays is what makes update and remove cheap.
 */
export class KeyedMinHeap<K> {
  private readonly keys: K[] = []
  private readonly priorities: number[] = []
  private readonly slots = new Map<K, number>()

  get size(): number {
    return this.keys.length
  }

  has(key: K): boolean {
    return this.slots.has(key)
  }

  /** The key's priority, or undefined when it is not in the heap. */
  get(key: K): number | undefined {
    const slot = this.slots.get(key)
    return slot === undefined ? undefined : this.priorities[slot]
  }

  /** Inserts the key, or moves it to the new priority when present. */
  set(key: K, priority: number): void {
    const slot = this.slots.get(key)
    if (slot === undefined) {
      this.keys.push(key)
      this.priorities.push(priority)
      this.slots.set(key, this.keys.length - 1)
      this.up(this.keys.length - 1)
      return
    }
    const before = this.priorities[slot] as number
    this.priorities[slot] = priority
    if (priority < before) this.up(slot)
    else this.down(slot)
  }

  /** Removes the key; false when it was not there. */
  delete(key: K): boolean {
    const slot = this.slots.get(key)
    if (slot === undefined) return false
    this.removeAt(slot)
    return true
  }

  /** The lowest priority, or undefined when empty. */
  peekPriority(): number | undefined {
    return this.priorities[0]
  }

  /** The key with the lowest priority, or undefined when empty. */
  peekKey(): K | undefined {
    return this.keys[0]
  }

  /** Removes and returns the key with the lowest priority. */
  pop(): K | undefined {
    if (this.keys.length === 0) return undefined
    const key = this.keys[0] as K
    this.removeAt(0)
    return key
  }

  clear(): void {
    this.keys.length = 0
    this.priorities.length = 0
    this.slots.clear()
  }

  private removeAt(slot: number): void {
    const last = this.keys.length - 1
    this.slots.delete(this.keys[slot] as K)
    if (slot !== last) {
      this.move(last, slot)
      this.keys.pop()
      this.priorities.pop()
      this.up(slot)
      this.down(slot)
    } else {
      this.keys.pop()
      this.priorities.pop()
    }
  }

  private up(slot: number): void {
    while (slot > 0) {
      const parent = (slot - 1) >> 1
      if ((this.priorities[parent] as number) <= (this.priorities[slot] as number)) return
      this.swap(slot, parent)
      slot = parent
    }
  }

  private down(slot: number): void {
    const n = this.keys.length
    for (;;) {
      const left = 2 * slot + 1
      const right = left + 1
      let least = slot
      if (left < n && (this.priorities[left] as number) < (this.priorities[least] as number)) least = left
      if (right < n && (this.priorities[right] as number) < (this.priorities[least] as number)) least = right
      if (least === slot) return
      this.swap(slot, least)
      slot = least
    }
  }

  private swap(a: number, b: number): void {
    const key = this.keys[a] as K
    const priority = this.priorities[a] as number
    this.move(b, a)
    this.keys[b] = key
    this.priorities[b] = priority
    this.slots.set(key, b)
  }

  /** Copies slot from into slot to (the caller has taken care of what was in to). */
  private move(from: number, to: number): void {
    const key = this.keys[from] as K
    this.keys[to] = key
    this.priorities[to] = this.priorities[from] as number
    this.slots.set(key, to)
  }
}
