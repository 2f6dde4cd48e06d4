/**
 * What the delta-encoding plugin keeps beside the instances themselves (RFC 3229: a
 * server chooses which instances it keeps as bases), bounded in bytes whatever the
 * requests: a URL can be as long as the server's header limit allows (16 KiB by default)
 * and a client can come from many addresses, so nothing here holds a URL, a user name or
 * an address as it came. Representations and clients are kept by the SHA-256 of what
 * names them (fixed size; a collision would take finding two inputs with one SHA-256),
 * and every table counts the bytes it holds against a bound.
 *
 * - RecentInstances: the entity-tag last stored per representation, so that the same
 *   instance is not copied into the store again; bounded in bytes (least recently used
 *   first).
 * - InsertBudget: how many new representations each client added this minute; at most
 *   `maxClients` clients, each charged a fixed size.
 */
import { createHash } from 'node:crypto'
import { LRUCache } from 'lru-cache'

/** What names a representation or a client in these tables: base64url SHA-256, 43 characters. */
export function digestKey (name: string): string {
  return createHash('sha256').update(name).digest('base64url')
}

/**
 * Charged per RecentInstances entry besides its entity-tag: the 43-character key (a string
 * of its own), the entry object with its time, and lru-cache's slots for it (measured with
 * 100,000 entries: about 190 bytes each).
 */
export const RECENT_ENTRY_BYTES = 256

/** Default bound of RecentInstances: 4 MiB, some 16,000 representations with short entity-tags. */
export const DEFAULT_RECENT_BYTES = 4 * 1024 * 1024

/** How long an instance stored counts as "just stored" (not copied again), in ms. */
export const RECENT_FRESH_MS = 5000

export interface RecentInstancesOptions {
  /** Bound of the bytes held (default 4 MiB). */
  maxBytes?: number
  /** Clock in milliseconds, for tests (default Date.now). */
  now?: () => number
}

/** The entity-tag last stored per representation (keyed by digestKey), bounded in bytes. */
export class RecentInstances {
  readonly #entries: LRUCache<string, { etag: string, at: number }>
  readonly #now: () => number
  readonly maxBytes: number

  constructor (options: RecentInstancesOptions = {}) {
    this.maxBytes = positive('maxBytes', options.maxBytes ?? DEFAULT_RECENT_BYTES)
    this.#now = options.now ?? Date.now
    // An entity-tag is charged two bytes a character (a string may hold UTF-16).
    this.#entries = new LRUCache({ maxSize: this.maxBytes, sizeCalculation: (e) => RECENT_ENTRY_BYTES + 2 * e.etag.length })
  }

  /** Bytes charged now; never above `maxBytes`. */
  get bytes (): number {
    return this.#entries.calculatedSize
  }

  get size (): number {
    return this.#entries.size
  }

  /** True when `etag` was stored for `key` less than RECENT_FRESH_MS ago. */
  recently (key: string, etag: string): boolean {
    const e = this.#entries.get(key)
    return e !== undefined && e.etag === etag && this.#now() - e.at < RECENT_FRESH_MS
  }

  /** True when an instance of `key` was stored (and not forgotten since). */
  known (key: string): boolean {
    return this.#entries.has(key)
  }

  mark (key: string, etag: string): void {
    this.#entries.set(key, { etag, at: this.#now() })
  }

  forget (key: string): void {
    this.#entries.delete(key)
  }
}

/** Charged per InsertBudget client: the 43-character key and a Map slot with its count. */
export const BUDGET_ENTRY_BYTES = 160

/** Default number of clients an InsertBudget tracks in one minute. */
export const DEFAULT_BUDGET_CLIENTS = 10_000

export interface InsertBudgetOptions {
  /** New representations a client may add per minute. */
  perMinute: number
  /** Clients tracked at once (default 10,000); past it, the rest share one budget until the minute ends. */
  maxClients?: number
  /** Clock in milliseconds, for tests (default Date.now). */
  now?: () => number
}

/** Representations each client may add per minute, in a table of at most `maxClients` entries. */
export class InsertBudget {
  readonly #perMinute: number
  readonly #maxClients: number
  readonly #now: () => number
  #windowEnds = -Infinity
  #counts = new Map<string, number>()

  constructor (options: InsertBudgetOptions) {
    this.#perMinute = positive('perMinute', options.perMinute)
    this.#maxClients = positive('maxClients', options.maxClients ?? DEFAULT_BUDGET_CLIENTS)
    this.#now = options.now ?? Date.now
  }

  get maxBytes (): number {
    return this.#maxClients * BUDGET_ENTRY_BYTES
  }

  /** Bytes charged now: a fixed size per client tracked; never above `maxBytes`. */
  get bytes (): number {
    return this.#counts.size * BUDGET_ENTRY_BYTES
  }

  /**
   * Counts one new representation for `client` (a clientKey) and tells whether it is within
   * the budget. A minute is a window that opens with the first count after the last one
   * closed (not a minute of the clock: no client gets two budgets by straddling one).
   */
  allow (client: string): boolean {
    const now = this.#now()
    if (now >= this.#windowEnds) {
      this.#windowEnds = now + 60_000
      this.#counts = new Map()
    }
    // A table full of clients: the ones not in it share one budget until the next minute.
    const key = this.#counts.has(client) || this.#counts.size < this.#maxClients - 1 ? client : '*'
    const n = this.#counts.get(key) ?? 0
    if (n >= this.#perMinute) return false
    this.#counts.set(key, n + 1)
    return true
  }
}

/**
 * Who a budget is kept for: the authenticated principal where there is one, else the
 * client's network (addressGroup). Fixed size whatever the name or address.
 */
export function clientKey (principal: { scheme: string, subject: string } | null | undefined, address: string): string {
  if (principal !== null && principal !== undefined) return digestKey(`p\0${principal.scheme}\0${principal.subject}`)
  return digestKey(`a\0${addressGroup(address)}`)
}

/**
 * The network an address is counted under: an IPv6 address by its /64 (the prefix one
 * subscriber is given, RFC 6177 and RFC 4291 2.5.4: the interface identifier is the
 * host's to choose, so it names no client); an IPv4-mapped IPv6 address as its IPv4
 * address (RFC 4291 2.5.5.2); anything else as it is.
 */
export function addressGroup (address: string): string {
  if (!address.includes(':')) return address
  const lower = address.toLowerCase().split('%')[0] // RFC 4007 11: a zone index names no network
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower)
  if (mapped !== null) return mapped[1]
  const halves = lower.split('::')
  const head = halves[0] === '' ? [] : halves[0].split(':')
  const tail = halves.length > 1 && halves[1] !== '' ? halves[1].split(':') : []
  // An embedded IPv4 address (RFC 4291 2.2, form 3) fills the last two groups.
  const tailGroups = tail.length + (tail.length > 0 && tail[tail.length - 1].includes('.') ? 1 : 0)
  const groups = halves.length > 1 ? [...head, ...Array<string>(Math.max(0, 8 - head.length - tailGroups)).fill('0'), ...tail] : head
  return groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '')).join(':') + '::/64'
}

function positive (name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`)
  return value
}
