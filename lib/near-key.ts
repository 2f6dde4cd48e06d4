/**
 * Which of some known keys a typed key was probably meant to be: the config key a user
 * misspelt (`auht` for `auth`), so that a boot error can ask "did you mean".
 */

/** The first of `keys` that `typed` is within a typo of, or undefined (an exact match is no typo). */
export function nearKey (typed: string, keys: readonly string[]): string | undefined {
  return keys.find((key) => key !== typed && isTypo(typed, key))
}

/** Same letters but case, two neighbours swapped, or (keys of 7+ letters) one letter added, lost or changed. */
function isTypo (typed: string, key: string): boolean {
  const a = typed.toLowerCase()
  const b = key.toLowerCase()
  if (a === b) return true
  if (a.length === b.length) {
    const diff = [...a].flatMap((ch, i) => ch === b[i] ? [] : [i])
    if (diff.length === 2 && diff[1] === diff[0] + 1 && a[diff[0]] === b[diff[1]] && a[diff[1]] === b[diff[0]]) return true
    return b.length >= 7 && diff.length === 1
  }
  if (b.length < 7 || Math.abs(a.length - b.length) !== 1) return false
  const [short, long] = a.length < b.length ? [a, b] : [b, a]
  for (let i = 0; i < long.length; i++) if (long.slice(0, i) + long.slice(i + 1) === short) return true
  return false
}
