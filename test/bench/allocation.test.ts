import { test } from 'tap'
import { join } from 'node:path'
import { ROOT } from '../helpers/paths'

// bench/ is plain CommonJS JavaScript (no declarations): the shapes this test relies on.
interface Reading { bytes?: number, pauseMs?: number, lastPauseMs?: number, lines?: number, untrusted?: string }
interface Allocation {
  readWindow: (text: string, from: number, opts?: { requests?: number, heapLimit?: number, maxBytesPerRequest?: number }) => Reading
  trustedWindow: <W>(once: () => Promise<W>, read: (w: W) => Reading) => Promise<W & { gc?: Reading, retried?: string, untrusted?: string }>
  wholeBytes: (result: { bytes: number | null }) => number | null
  UNMEASURED: string
}

const { readWindow, trustedWindow, wholeBytes, UNMEASURED } = require(join(ROOT, 'bench', 'allocation.js')) as Allocation

// Lines as `--trace-gc-nvp` writes them (Node 22 and 24), cut to the fields the reader uses.
const nvp = (pause: string, allocated: string, gc = 's'): string => `[1:0x1:0]      248 ms: pause=${pause} mutator=12.6 gc=${gc} reduce_memory=0 allocated=${allocated} promoted=0 semi_space_copied=0\n`
const HEAP = 4 * 1024 * 1024 * 1024

test('a window of GC lines: allocated= and pause= summed, the closing line\'s pause apart', async (t) => {
  const before = nvp('9.0', '777')
  const text = before + nvp('1.5', '1000') + nvp('2.5', '2000') + nvp('4.0', '500', 'mc')
  t.same(readWindow(text, before.length, { requests: 10, heapLimit: HEAP }), { bytes: 3500, pauseMs: 8, lastPauseMs: 4, lines: 3 })
  // JSON lines (Node 26)
  const json = '{"pause":1.5,"allocated":1000,"type":"s"}\n{"pause":2,"allocated":24,"type":"mc"}\n'
  t.same(readWindow(json, 0, { requests: 10, heapLimit: HEAP }), { bytes: 1024, pauseMs: 3.5, lastPauseMs: 2, lines: 2 })
  // Fields that only end in `allocated` are other fields.
  t.equal(readWindow(nvp('1', '10').replace('promoted=0', 'external_allocated=999'), 0).bytes, 10)
})

test('a window that starts inside a line begins at the next one', async (t) => {
  const text = nvp('1', '5000') + nvp('1', '100', 'mc')
  t.equal(readWindow(text, 20, { requests: 1 }).bytes, 100, 'the line the window starts inside ran before it')
  t.match(readWindow(nvp('1', '5000'), 20, { requests: 1 }).untrusted, /no GC line/)
})

test('a window with a line it cannot trust is refused whole, saying why', async (t) => {
  const ok = nvp('1', '1000')
  const refused = (text: string, opts = {}): string | undefined => {
    const r = readWindow(text, 0, { requests: 100, heapLimit: HEAP, ...opts })
    t.equal(r.bytes, undefined, 'no number beside a refusal')
    return r.untrusted
  }
  t.match(refused(ok + nvp('1', '-4096')), /negative allocation \(allocated=-4096\)/)
  t.match(refused(ok + nvp('1', '18446744073709547520')), /overflowed .*above 2\^53/)
  t.match(refused(ok + nvp('1', '1.8e+19')), /not an integer \(allocated=1\.8e\+19\)/)
  t.match(refused(ok + nvp('1', '')), /not an integer/)
  t.match(refused(ok + nvp('1', 'nan')), /not an integer/)
  t.match(refused(ok + nvp('1', '1000').replace(' allocated=1000', '')), /no allocated= field/)
  t.match(refused(ok + nvp('x', '1000')), /pause= field is not a number/)
  t.match(refused(ok + nvp('1', String(HEAP + 1))), /more than the heap holds \(heap_size_limit 4294967296 B\)/)
  t.match(refused(ok + nvp('1', String(2 ** 40)), { heapLimit: 2 ** 41, maxBytesPerRequest: 1024 }), /sum to \d+ B over 100 requests, more than 1024 B a request/)
  t.match(refused(ok + nvp('1', '1000').slice(0, -30)), /last line was cut/)
  t.match(refused('no trace here\n'), /no GC line/)
  t.match(refused(''), /no GC line/)
})

test('a refused window is run once more; twice refused, the result is the refusal, not a number', async (t) => {
  const good = { untrusted: undefined, bytes: 10, pauseMs: 0, lastPauseMs: 0, lines: 1 }
  let runs = 0
  const readings = [{ untrusted: 'a GC line reports a negative allocation (allocated=-1)' }, good]
  const retried = await trustedWindow(async () => ({ run: ++runs }), () => readings.shift() as Reading)
  t.equal(runs, 2)
  t.equal(retried.run, 2, 'the second window is the one read')
  t.equal(retried.gc?.bytes, 10)
  t.match(retried.retried, /negative allocation/)

  runs = 0
  const twice = await trustedWindow(async () => ({ run: ++runs }), () => ({ untrusted: `bad ${runs}` }))
  t.equal(runs, 2, 'at most one retry')
  t.same(twice, { untrusted: 'untrusted GC trace, twice: bad 1; then bad 2' })

  runs = 0
  const first = await trustedWindow(async () => ({ run: ++runs }), () => good)
  t.equal(runs, 1)
  t.equal(first.retried, undefined)

  t.equal(wholeBytes({ bytes: null }), null, 'a refused measurement stays null, never 0')
  t.equal(wholeBytes({ bytes: 1234.6 }), 1235)
  t.equal(UNMEASURED, 'unmeasured (untrusted GC trace)')
})
