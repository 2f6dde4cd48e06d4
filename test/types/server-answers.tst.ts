// Type tests of the catalogue's answers written before a route runs (417, 505), against the generated .d.ts.
import { expect, test } from 'tstyche'
import { errorCodes } from 'fastify-http-conventions'

test('the catalogue holds the 417 and 505 the server answers with', () => {
  expect(new errorCodes.EXPECTATION_FAILED('x')).type.toHaveProperty('statusCode')
  expect(new errorCodes.HTTP_VERSION_NOT_SUPPORTED('x')).type.toHaveProperty('statusCode')
  expect(errorCodes).type.not.toHaveProperty('HTTP_VERSION_UNSUPPORTED')
})
