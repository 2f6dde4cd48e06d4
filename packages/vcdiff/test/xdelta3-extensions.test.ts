// The two xdelta3 extensions the decoder skips (an application header, an Adler-32 checksum
// per window), proven on hand-made deltas so that they hold on a machine without xdelta3;
// rfc-3284-interop.test.ts decodes xdelta3's own output.
import { test } from 'tap'
import { decode, VcdiffError } from '../src/index'

const MAGIC = [0xd6, 0xc3, 0xc4, 0x00]
const HELLO = [...Buffer.from('hello')]
// RFC 3284 section 5.6: default code table index 6 is ADD of size 5.
const ADD5 = 0x06

/** One window without source: ADD "hello"; `checksum` adds xdelta3's 4-byte Adler-32 (VCD_ADLER32, 0x04). */
function window (checksum: boolean): number[] {
  const sums = checksum ? [0x06, 0x2c, 0x02, 0x15] : []
  const body = [HELLO.length, 0x00, HELLO.length, 1, 0, ...sums, ...HELLO, ADD5]
  return [checksum ? 0x04 : 0x00, body.length, ...body]
}

test('RFC 3284 section 4.1: an application header (VCD_APPHEADER) is skipped', async (t) => {
  const delta = Uint8Array.from([...MAGIC, 0x04, 3, 0x61, 0x62, 0x63, ...window(false)])
  t.equal(Buffer.from(decode(new Uint8Array(0), delta)).toString(), 'hello')
  const truncated = Uint8Array.from([...MAGIC, 0x04, 9, 0x61])
  t.throws(() => decode(new Uint8Array(0), truncated), VcdiffError)
})

test('xdelta3: a window\'s Adler-32 checksum (VCD_ADLER32) is skipped, not verified', async (t) => {
  const delta = Uint8Array.from([...MAGIC, 0x00, ...window(true)])
  t.equal(Buffer.from(decode(new Uint8Array(0), delta)).toString(), 'hello')
})
