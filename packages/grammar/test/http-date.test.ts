import { test } from 'tap'
import fc from 'fast-check'
import { parseHttpDate, formatHttpDate } from '../src/http-date'

const EXAMPLE = Date.UTC(1994, 10, 6, 8, 49, 37)
const NOW_2025 = Date.UTC(2025, 5, 1)
const YEAR_0 = -62167219200000 // 0000-01-01T00:00:00Z
const YEAR_9999_END = 253402300799999 // 9999-12-31T23:59:59.999Z
const LONG_DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday']

test('RFC 9110 5.6.7: the three forms of the RFC example are the same instant', async (t) => {
  t.equal(parseHttpDate('Sun, 06 Nov 1994 08:49:37 GMT'), EXAMPLE, 'IMF-fixdate')
  t.equal(parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT', NOW_2025), EXAMPLE, 'obsolete RFC 850 format')
  t.equal(parseHttpDate('Sun Nov  6 08:49:37 1994'), EXAMPLE, 'ANSI C asctime() format')
  t.equal(parseHttpDate('Sun Nov 06 08:49:37 1994'), EXAMPLE, 'asctime with a two-digit day')
  t.equal(parseHttpDate(' \tSun, 06 Nov 1994 08:49:37 GMT\t '), EXAMPLE, 'OWS around the value is ignored')
})

test('RFC 9110 5.6.7: HTTP-date is case-sensitive', async (t) => {
  for (const bad of ['sun, 06 Nov 1994 08:49:37 GMT', 'Sun, 06 NOV 1994 08:49:37 GMT', 'Sun, 06 Nov 1994 08:49:37 gmt',
    'sunday, 06-Nov-94 08:49:37 GMT', 'Sun nov  6 08:49:37 1994']) {
    t.equal(parseHttpDate(bad), null, bad)
  }
})

test('RFC 9110 5.6.7: the day name must be a day name of its form but is not checked against the date', async (t) => {
  t.equal(parseHttpDate('Mon, 06 Nov 1994 08:49:37 GMT'), EXAMPLE, 'a wrong weekday is accepted (recipients are robust)')
  t.equal(parseHttpDate('Wednesday, 06-Nov-94 08:49:37 GMT', NOW_2025), EXAMPLE)
  t.equal(parseHttpDate('Fri Nov  6 08:49:37 1994'), EXAMPLE)
  for (const bad of ['Xyz, 06 Nov 1994 08:49:37 GMT', 'Sunday, 06 Nov 1994 08:49:37 GMT', 'Sun, 06-Nov-94 08:49:37 GMT',
    'Sundae, 06-Nov-94 08:49:37 GMT', 'Sund, 06-Nov-94 08:49:37 GMT', 'Abc Nov  6 08:49:37 1994']) {
    t.equal(parseHttpDate(bad, NOW_2025), null, bad)
  }
})

test('RFC 9110 5.6.7: out-of-range fields make the date invalid', async (t) => {
  for (const bad of [
    'Sun, 32 Nov 1994 08:49:37 GMT', 'Sun, 31 Nov 1994 08:49:37 GMT', 'Sun, 00 Nov 1994 08:49:37 GMT',
    'Sun, 29 Feb 1900 08:49:37 GMT', 'Sun, 29 Feb 2023 08:49:37 GMT', 'Sun, 06 Nox 1994 08:49:37 GMT',
    'Sun, 06 Nov 1994 24:00:00 GMT', 'Sun, 06 Nov 1994 08:60:37 GMT', 'Sun, 06 Nov 1994 08:49:61 GMT',
    'Sunday, 31-Jun-94 08:49:37 GMT', 'Sun Feb 30 08:49:37 1994', 'Sun Nov 0  08:49:37 1994'
  ]) {
    t.equal(parseHttpDate(bad, NOW_2025), null, bad)
  }
  t.equal(parseHttpDate('Tue, 29 Feb 2000 00:00:00 GMT'), Date.UTC(2000, 1, 29), '2000 is a leap year')
  t.equal(parseHttpDate('Thu, 29 Feb 2024 23:59:59 GMT'), Date.UTC(2024, 1, 29, 23, 59, 59))
  t.equal(parseHttpDate('Wed, 31 Dec 2014 23:59:60 GMT'), Date.UTC(2015, 0, 1), 'a leap second counts as the next minute')
  t.equal(parseHttpDate('Sat, 01 Jan 0000 00:00:00 GMT'), YEAR_0, 'year 0000')
  t.equal(parseHttpDate('Fri, 31 Dec 9999 23:59:59 GMT'), YEAR_9999_END - 999, 'year 9999')
})

test('RFC 9110 5.6.7: junk and near-misses are not HTTP-dates', async (t) => {
  for (const bad of [
    '', 'garbage', '0', '784111777', '1994-11-06T08:49:37Z', 'Sun, 06 Nov 1994 08:49:37 UTC',
    'Sun, 06 Nov 1994 08:49:37 +0000', 'Sun, 6 Nov 1994 08:49:37 GMT', 'Sun,06 Nov 1994 08:49:37 GMT',
    'Sun, 06 Nov 1994 08:49:37 GMT, Mon, 07 Nov 1994 08:49:37 GMT', 'Sun, 06 Nov 94 08:49:37 GMT',
    'Sun, 06 Nov 1994 8:49:37 GMT', 'Sun, 06 Nov 1994 08.49.37 GMT', 'Sun, 06 Nov 1994 08:49:37 GMTX',
    'Sun, 06 Nov 19a4 08:49:37 GMT', 'Sun, 06_Nov 1994 08:49:37 GMT', 'Sun, 06 Nov 1994 08:49:37_GMT',
    'Sunday, 06-Nov-1994 08:49:37 GMT', 'Sunday, 06 Nov-94 08:49:37 GMT', 'Sunday, 06-Nov-9x 08:49:37 GMT',
    'Sunday, 06-Nov-94 08:49:37 UTC', 'Sunday,06-Nov-94 08:49:37 GMT', 'Sunday 06-Nov-94 08:49:37 GMT',
    'Sun Nov  6 08:49:37 94', 'Sun Nov  6 08:49:37 19x4', 'Sun Nov  6 08:49:37  1994', 'Sun Nov_ 6 08:49:37 1994',
    'Sun Nov  6_08:49:37 1994', 'Sun Nov  6 08:49:37_1994', 'Sun Nov  6 08:49:37 1994 GMT',
    'Sun, 06 Nov 1994 08:49:37 GM\u0000', 'Sun, 06 Nov 1994 08:49:37 GMT\u00a0'
  ]) {
    t.equal(parseHttpDate(bad, NOW_2025), null, JSON.stringify(bad))
  }
  t.equal(parseHttpDate(undefined as unknown as string), null, 'a non-string value')
})

test('RFC 9110 5.6.7: a two-digit year more than 50 years in the future is the most recent past year', async (t) => {
  const at = (yy: string, now: number) => parseHttpDate(`Sunday, 06-Nov-${yy} 08:49:37 GMT`, now)
  t.equal(at('94', NOW_2025), Date.UTC(1994, 10, 6, 8, 49, 37))
  t.equal(at('25', NOW_2025), Date.UTC(2025, 10, 6, 8, 49, 37))
  t.equal(at('75', NOW_2025), Date.UTC(2075, 10, 6, 8, 49, 37), 'exactly 50 years ahead stays in the future')
  t.equal(at('76', NOW_2025), Date.UTC(1976, 10, 6, 8, 49, 37), '51 years ahead goes back a century')
  t.equal(at('00', NOW_2025), Date.UTC(2000, 10, 6, 8, 49, 37))
  const now2090 = Date.UTC(2090, 0, 1)
  t.equal(at('10', now2090), Date.UTC(2110, 10, 6, 8, 49, 37), 'less than 50 years ahead of a late-century now')
  t.equal(at('95', now2090), Date.UTC(2095, 10, 6, 8, 49, 37))
  t.equal(at('94', Number.NaN), Date.UTC(1994, 10, 6, 8, 49, 37), 'an unusable now falls back to the clock')
  t.equal(at('94', undefined as unknown as number), Date.UTC(1994, 10, 6, 8, 49, 37), 'default now is the clock')
})

test('formatHttpDate writes IMF-fixdate truncated to the whole second', async (t) => {
  t.equal(formatHttpDate(EXAMPLE), 'Sun, 06 Nov 1994 08:49:37 GMT')
  t.equal(formatHttpDate(EXAMPLE + 999), 'Sun, 06 Nov 1994 08:49:37 GMT')
  t.equal(formatHttpDate(0), 'Thu, 01 Jan 1970 00:00:00 GMT')
  t.equal(formatHttpDate(-1), 'Wed, 31 Dec 1969 23:59:59 GMT', 'truncation is toward the past')
  t.equal(formatHttpDate(YEAR_0), 'Sat, 01 Jan 0000 00:00:00 GMT')
  t.equal(formatHttpDate(YEAR_9999_END), 'Fri, 31 Dec 9999 23:59:59 GMT')
  t.equal(formatHttpDate(Date.UTC(2024, 1, 29, 12, 5, 9)), 'Thu, 29 Feb 2024 12:05:09 GMT')
  t.throws(() => formatHttpDate(YEAR_0 - 1), RangeError)
  t.throws(() => formatHttpDate(YEAR_9999_END + 1), RangeError)
  t.throws(() => formatHttpDate(Number.NaN), RangeError)
  t.throws(() => formatHttpDate(Infinity), RangeError)
  t.throws(() => formatHttpDate('0' as unknown as number), RangeError)
})

const instantArb = fc.integer({ min: YEAR_0, max: YEAR_9999_END })

test('property: formatHttpDate and parseHttpDate round-trip at one-second resolution', async (t) => {
  t.doesNotThrow(() => fc.assert(fc.property(instantArb, (ms) => {
    return parseHttpDate(formatHttpDate(ms)) === Math.floor(ms / 1000) * 1000
  }), { numRuns: 2000 }), '2000 instants between years 0000 and 9999')
})

test('property: formatHttpDate agrees with Date#toUTCString and parseHttpDate with Date.parse (years 1000-9999)', async (t) => {
  t.doesNotThrow(() => fc.assert(fc.property(fc.integer({ min: Date.UTC(1000, 0, 1), max: YEAR_9999_END }), (ms) => {
    const text = formatHttpDate(ms)
    return text === new Date(ms).toUTCString() && parseHttpDate(text) === Date.parse(text)
  }), { numRuns: 2000 }), 'oracle agrees')
})

test('property: the three forms of any instant parse to the same value', async (t) => {
  const now = NOW_2025
  // two-digit years are unambiguous inside (now - 50, now + 50]
  t.doesNotThrow(() => fc.assert(fc.property(fc.integer({ min: Date.UTC(1976, 0, 1), max: Date.UTC(2075, 11, 31, 23, 59, 59) }), (ms) => {
    const imf = formatHttpDate(ms) // Sun, 06 Nov 1994 08:49:37 GMT
    const dayName = imf.slice(0, 3)
    const day = imf.slice(5, 7)
    const month = imf.slice(8, 11)
    const year = imf.slice(12, 16)
    const time = imf.slice(17, 25)
    const long = LONG_DAYS.find((d) => d.startsWith(dayName))
    const rfc850 = `${long}, ${day}-${month}-${year.slice(2)} ${time} GMT`
    const asctime = `${dayName} ${month} ${day[0] === '0' ? ' ' + day[1] : day} ${time} ${year}`
    const expected = Math.floor(ms / 1000) * 1000
    return parseHttpDate(imf) === expected && parseHttpDate(rfc850, now) === expected && parseHttpDate(asctime) === expected
  }), { numRuns: 1000 }), 'IMF-fixdate, rfc850-date and asctime-date agree')
})

test('property: parseHttpDate never throws and returns whole seconds or null', async (t) => {
  const near = fc.string({ unit: fc.constantFrom(...'SunMoy, 0619:-GMTNov 4'.split('')), maxLength: 34 })
  t.doesNotThrow(() => fc.assert(fc.property(fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), near), fc.integer(), (s, now) => {
    const v = parseHttpDate(s, now)
    return v === null || (Number.isInteger(v) && v % 1000 === 0)
  }), { numRuns: 3000 }), 'no throw')
})

test('linear time: long adversarial inputs are refused after one pass', async (t) => {
  const n = 1_000_000
  t.equal(parseHttpDate(' '.repeat(n)), null)
  t.equal(parseHttpDate(' '.repeat(n) + 'Sun, 06 Nov 1994 08:49:37 GMT' + '\t'.repeat(n)), EXAMPLE)
  t.equal(parseHttpDate('Sun, '.repeat(n)), null)
  t.equal(parseHttpDate('Sunday,'.repeat(n)), null)
  t.equal(parseHttpDate(','.repeat(n)), null)
})
