/** How the kernel reads a route's options (plugins/services/shared.ts hands them on to the plugins). */

/** A route's hook option (undefined, one function, or an array) as an array. */
export function asArray (hooks: unknown): unknown[] {
  if (hooks === undefined || hooks === null) return []
  return Array.isArray(hooks) ? hooks : [hooks]
}

/** A route's methods, upper-case (`method` is one name or a list). */
export function methodsOf (route: { method?: unknown }): string[] {
  const m = route.method
  return (Array.isArray(m) ? m : typeof m === 'string' ? [m] : []).map((x) => String(x).toUpperCase())
}

/** `route GET /x` (or `route GET,HEAD /x`): how boot errors name a route. */
export function routeWhere (route: { method?: unknown, url: string }): string {
  return `route ${methodsOf(route).join(',')} ${route.url}`
}
