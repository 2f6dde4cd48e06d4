/**
 * HTTP-date (RFC 9110 section 5.6.7):
 *
 *   HTTP-date    = IMF-fixdate / obs-date
 *   IMF-fixdate  = day-name "," SP date1 SP time-of-day SP GMT
 *                  ; Sun, 06 Nov 1994 08:49:37 GMT
 *   rfc850-date  = day-name-l "," SP date2 SP time-of-day SP GMT
 *                  ; Sunday, 06-Nov-94 08:49:37 GMT
 *   asctime-date = day-name SP date3 SP time-of-day SP year
 *                  ; Sun Nov  6 08:49:37 1994
 *
 * Parsing is by fixed positions (no regular expressions), linear in the input,
 * and never throws. Choices where the RFC leaves room:
 * - HTTP-date is case-sensitive (5.6.7): `sun`, `NOV`, `gmt` are rejected.
 * - The day name must be one of the seven names of its form (short for
 *   IMF-fixdate and asctime, long for rfc850-date) but is not checked against
 *   the date: 5.6.7 asks recipients to be robust, and the weekday is redundant
 *   information (Go's time.Parse does the same).
 * - Month day is checked against the month (no 31 Apr, 29 Feb only in leap
 *   years); hour 00-23, minute 00-59, second 00-60 (60 is a leap second as in
 *   RFC 5322 3.3, counted as the first second of the next minute, as POSIX time
 *   does).
 * - OWS around the value is ignored (field values are trimmed, RFC 9110 5.5).
 */

const DAY_NAMES = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat']
const DAY_NAMES_LONG = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday']
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']

const MS_PER_DAY = 86400000

function isLeap (y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0
}

function daysInMonth (y: number, m: number): number {
  // m is 0-based
  if (m === 1) return isLeap(y) ? 29 : 28
  return (m === 3 || m === 5 || m === 8 || m === 10) ? 30 : 31
}

/**
 * Days from 1970-01-01 to the given proleptic Gregorian date (m 1-based). Integer
 * arithmetic, valid for every year (Howard Hinnant's days_from_civil algorithm).
 */
function daysFromCivil (y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0
  const era = Math.floor(y / 400)
  const yoe = y - era * 400
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
}

/** Inverse of daysFromCivil: [year, month 1-12, day 1-31]. */
function civilFromDays (z: number): [number, number, number] {
  z += 719468
  const era = Math.floor(z / 146097)
  const doe = z - era * 146097
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365)
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1
  const m = mp < 10 ? mp + 3 : mp - 9
  return [era * 400 + yoe + (m <= 2 ? 1 : 0), m, d]
}

/** Value of `n` ASCII digits at `i`, or -1 when any is not a digit (or missing). */
function digits (s: string, i: number, n: number): number {
  let v = 0
  for (let k = 0; k < n; k++) {
    const c = s.charCodeAt(i + k) // NaN past the end: fails the test below
    if (!(c >= 48 && c <= 57)) return -1
    v = v * 10 + c - 48
  }
  return v
}

/** Index of `name` among `names` when `s` holds it exactly at `i`, else -1. */
function nameAt (s: string, i: number, names: readonly string[]): number {
  for (let k = 0; k < names.length; k++) {
    if (s.startsWith(names[k], i)) return k
  }
  return -1
}

/** time-of-day = hour ":" minute ":" second, at `i` (8 characters). Seconds of the day or -1. */
function timeOfDay (s: string, i: number): number {
  const h = digits(s, i, 2)
  const mi = digits(s, i + 3, 2)
  const se = digits(s, i + 6, 2)
  if (s.charCodeAt(i + 2) !== 58 || s.charCodeAt(i + 5) !== 58) return -1
  if (h < 0 || h > 23 || mi < 0 || mi > 59 || se < 0 || se > 60) return -1
  return h * 3600 + mi * 60 + se
}

function toMs (year: number, month0: number, day: number, seconds: number): number | null {
  if (month0 < 0 || day < 1 || day > daysInMonth(year, month0) || seconds < 0) return null
  return daysFromCivil(year, month0 + 1, day) * MS_PER_DAY + seconds * 1000
}

/**
 * RFC 9110 5.6.7: a two-digit rfc850-date year that "appears to be more than 50
 * years in the future" is the most recent past year with those digits. Decided
 * by calendar year relative to `now`, so the window is (now - 50, now + 50].
 */
function expandTwoDigitYear (yy: number, now: number): number {
  const current = civilFromDays(Math.floor(now / MS_PER_DAY))[0]
  let year = current - (((current % 100) + 100) % 100) + yy
  if (year > current + 50) year -= 100
  else if (year <= current - 50) year += 100
  return year
}

function isOws (c: number): boolean {
  return c === 32 || c === 9
}

/**
 * Parses an HTTP-date in any of its three forms (RFC 9110 5.6.7). Returns epoch
 * milliseconds (always whole seconds) or null for anything that is not a valid
 * HTTP-date. `now` (epoch ms) only matters for the two-digit year of rfc850-date.
 */
export function parseHttpDate (value: string, now: number = Date.now()): number | null {
  if (typeof value !== 'string') return null
  let start = 0
  let end = value.length
  while (start < end && isOws(value.charCodeAt(start))) start++
  while (end > start && isOws(value.charCodeAt(end - 1))) end--
  // Longest valid form is rfc850-date with "Wednesday": 9 + 2 + 22 = 33 characters.
  if (end - start > 33) return null
  const s = value.slice(start, end)

  if (s.charCodeAt(3) === 44) return parseImfFixdate(s)
  if (s.charCodeAt(3) === 32) return parseAsctime(s)
  return parseRfc850(s, Number.isFinite(now) ? now : Date.now())
}

// Sun, 06 Nov 1994 08:49:37 GMT
// 0123456789012345678901234567 8
function parseImfFixdate (s: string): number | null {
  if (s.length !== 29) return null
  if (nameAt(s, 0, DAY_NAMES) < 0) return null
  if (s.charCodeAt(4) !== 32 || s.charCodeAt(7) !== 32 || s.charCodeAt(11) !== 32 ||
    s.charCodeAt(16) !== 32 || s.charCodeAt(25) !== 32 || !s.endsWith('GMT')) return null
  const day = digits(s, 5, 2)
  const month = nameAt(s, 8, MONTHS)
  const year = digits(s, 12, 4)
  const time = timeOfDay(s, 17)
  if (year < 0) return null
  return toMs(year, month, day, time)
}

// Sun Nov  6 08:49:37 1994   or   Sun Nov 06 08:49:37 1994
// 012345678901234567890123
function parseAsctime (s: string): number | null {
  if (s.length !== 24) return null
  if (nameAt(s, 0, DAY_NAMES) < 0) return null
  if (s.charCodeAt(7) !== 32 || s.charCodeAt(10) !== 32 || s.charCodeAt(19) !== 32) return null
  const month = nameAt(s, 4, MONTHS)
  // date3 = month SP ( 2DIGIT / ( SP DIGIT ) )
  const day = s.charCodeAt(8) === 32 ? digits(s, 9, 1) : digits(s, 8, 2)
  const time = timeOfDay(s, 11)
  const year = digits(s, 20, 4)
  if (year < 0) return null
  return toMs(year, month, day, time)
}

// Sunday, 06-Nov-94 08:49:37 GMT
function parseRfc850 (s: string, now: number): number | null {
  const comma = s.indexOf(',')
  if (comma < 0) return null
  const dayName = nameAt(s, 0, DAY_NAMES_LONG)
  if (dayName < 0 || DAY_NAMES_LONG[dayName].length !== comma) return null
  // after the comma: SP date2 SP time-of-day SP GMT  (" 06-Nov-94 08:49:37 GMT", 23 characters)
  const i = comma + 1
  if (s.length !== i + 23) return null
  if (s.charCodeAt(i) !== 32 || s.charCodeAt(i + 3) !== 45 || s.charCodeAt(i + 7) !== 45 ||
    s.charCodeAt(i + 10) !== 32 || s.charCodeAt(i + 19) !== 32 || !s.endsWith('GMT')) return null
  const day = digits(s, i + 1, 2)
  const month = nameAt(s, i + 4, MONTHS)
  const yy = digits(s, i + 8, 2)
  const time = timeOfDay(s, i + 11)
  if (yy < 0) return null
  return toMs(expandTwoDigitYear(yy, now), month, day, time)
}

function pad2 (n: number): string {
  return n < 10 ? '0' + n : String(n)
}

/**
 * Formats epoch milliseconds as an IMF-fixdate (RFC 9110 5.6.7), truncated to
 * the whole second (toward the past). Throws a RangeError for a value that is not
 * finite or whose year is outside 0000-9999 (IMF-fixdate has a 4-digit year).
 */
export function formatHttpDate (ms: number): string {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) throw new RangeError('HTTP-date needs a finite time value')
  const seconds = Math.floor(ms / 1000)
  const days = Math.floor(seconds / 86400)
  const secOfDay = seconds - days * 86400
  const [y, m, d] = civilFromDays(days)
  if (y < 0 || y > 9999) throw new RangeError('IMF-fixdate cannot hold a year outside 0000-9999')
  // 1970-01-01 was a Thursday (index 4)
  const weekday = (((days + 4) % 7) + 7) % 7
  return DAY_NAMES[weekday] + ', ' + pad2(d) + ' ' + MONTHS[m - 1] + ' ' +
    String(y).padStart(4, '0') + ' ' +
    pad2(Math.floor(secOfDay / 3600)) + ':' + pad2(Math.floor(secOfDay / 60) % 60) + ':' + pad2(secOfDay % 60) + ' GMT'
}
