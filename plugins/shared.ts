/** Small helpers every plugin of the suite uses. */
import { invalidOption } from '../lib/errors'
import { isProfile } from '../lib/profile'

/** A route's hook option (undefined, one function, or an array) as an array. */
export function asArray (hooks: unknown): unknown[] {
  if (hooks === undefined || hooks === null) return []
  return Array.isArray(hooks) ? hooks : [hooks]
}

/** The boot-time error for a `profile` option that is neither 'spec' nor 'rfc9110', or null. */
export function profileError (where: string, profile: unknown): Error | null {
  if (profile === undefined || isProfile(profile)) return null
  return invalidOption(where, `profile must be 'spec' or 'rfc9110', got ${JSON.stringify(profile)}`)
}

/** Throws the boot-time error of profileError. */
export function assertProfile (where: string, profile: unknown): void {
  const err = profileError(where, profile)
  if (err !== null) throw err
}
