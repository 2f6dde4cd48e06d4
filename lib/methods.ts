/**
 * The methods a path serves, and the answer to a method it does not serve (RFC 9110 15.5.6,
 * 9.3.7, 10.2.1). Pure: the router that matches paths is given (the plugin gives the same
 * find-my-way Fastify routes with, set up with the app's router options), so what "a route of
 * the path" means is exactly what it means to Fastify.
 */

/** What the table keeps of the routes of one method and pattern. */
export interface RouteEntry {
  /** True when a route of this method and pattern is covered (the convention is in effect, not turned off by its config). */
  covered: boolean
  /** The media types its PATCH route accepts (`Accept-Patch`), where it is one of the suite's. */
  acceptPatch?: string
}

/** Constraint values of a route (`{ host: 'internal.example' }`), or derived from a request. */
export type Constraints = Readonly<Record<string, string>>

/** The part of a find-my-way router the table uses. */
export interface PathRouter {
  on: (method: string, pattern: string, opts: { constraints?: Constraints }, handler: () => void, store: RouteEntry) => unknown
  find: (method: string, path: string, constraints?: Constraints) => { store: unknown } | null
}

/**
 * Whether the app's own router routes a request of `method` to `path` with these derived
 * constraints: the truth the table's answers are held to (Fastify's `findRoute`).
 */
export type Routed = (method: string, path: string, constraints: Constraints | undefined) => boolean

/** How the suite answers a request no route serves, or null where it leaves the request to the app's not-found handler. */
export type Verdict =
  | { readonly kind: 'options', readonly allow: string, readonly acceptPatch?: string }
  | { readonly kind: 'not-allowed', readonly allow: string }

/** The order methods are listed in Allow: the usual ones first, then the others by name. */
const ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']

function rank (method: string): number {
  const i = ORDER.indexOf(method)
  return i === -1 ? ORDER.length : i
}

/** RFC 9110 10.2.1: the Allow value of the methods `served`, OPTIONS included (the convention answers it). */
export function allowValue (served: Iterable<string>): string {
  const methods = new Set(served)
  methods.add('OPTIONS')
  return [...methods].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0)).join(', ')
}

/* c8 ignore next */ // The router only finds paths for the table: its handler is never called.
function noHandler (): void {}

/** The routes of an app by method and pattern, and the verdict for a request Fastify found no route for. */
export class MethodTable {
  private readonly router: PathRouter
  private readonly methods = new Set<string>()
  private readonly entries = new Map<string, RouteEntry>()

  constructor (router: PathRouter) {
    this.router = router
  }

  /**
   * Records a route of `method` at `pattern`, with its constraints (host, version: those the
   * table can derive from a request); a route of the same method, pattern and constraints
   * merges with it.
   */
  add (method: string, pattern: string, covered: boolean, acceptPatch?: string, constraints?: Constraints): void {
    const key = `${method} ${pattern} ${constraints === undefined ? '' : JSON.stringify(constraints)}`
    let entry = this.entries.get(key)
    if (entry === undefined) {
      entry = { covered: false }
      this.entries.set(key, entry)
      try {
        this.router.on(method, pattern, constraints === undefined ? {} : { constraints }, noHandler, entry)
      } catch {
        // The same pattern with other parameter names: it matches the same paths.
      }
      this.methods.add(method)
    }
    if (covered) entry.covered = true
    if (acceptPatch !== undefined) entry.acceptPatch = acceptPatch
  }

  /**
   * A request Fastify found no route for: where a route the convention covers matches its
   * path and constraints, a method no route of the path serves is 405 with Allow (RFC 9110
   * 15.5.6), and OPTIONS is answered with Allow (RFC 9110 9.3.7). A path no route matches
   * (for this request's host and version), one only uncovered routes match, and a method a
   * route of the path serves are left to the app: null.
   */
  verdict (method: string, url: string, constraints: Constraints | undefined, routed: Routed): Verdict | null {
    const path = this.describe(url, constraints, routed)
    if (!path.covered || path.served.includes(method)) return null
    const allow = allowValue(path.served)
    if (method === 'OPTIONS') return path.acceptPatch === undefined ? { kind: 'options', allow } : { kind: 'options', allow, acceptPatch: path.acceptPatch }
    return { kind: 'not-allowed', allow }
  }

  /**
   * The methods that serve `url` for a request with these constraints, whether one of their
   * routes is covered, and the Accept-Patch of its PATCH route. A method counts only where the
   * app's router routes it too (`routed`), so the answer never names a route the request
   * could not reach (another host's, another version's).
   */
  describe (url: string, constraints: Constraints | undefined, routed: Routed): { served: string[], covered: boolean, acceptPatch?: string } {
    const served: string[] = []
    let covered = false
    let acceptPatch: string | undefined
    for (const m of this.methods) {
      const found = this.router.find(m, url, constraints)
      if (found === null || !routed(m, url, constraints)) continue
      const entry = found.store as RouteEntry
      served.push(m)
      if (entry.covered) covered = true
      if (m === 'PATCH') acceptPatch = entry.acceptPatch
    }
    return { served, covered, acceptPatch }
  }
}
