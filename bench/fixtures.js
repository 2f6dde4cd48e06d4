'use strict'
// Data shared by the benchmarks.

/** A 2 KB JSON document (the GET benchmarks' payload). */
const doc = Object.freeze({
  id: 'a1b2c3',
  slug: 'hello-world',
  title: 'Hello',
  tags: ['intro', 'bench'],
  published: true,
  body: 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(33)
})

/** The JSON Schema of an article a POST sends, its body up to `maxBody` characters. */
function articleBodySchema (maxBody) {
  return {
    type: 'object',
    required: ['slug', 'title', 'body'],
    additionalProperties: false,
    properties: {
      slug: { type: 'string', pattern: '^[a-z0-9]+(-[a-z0-9]+)*$', maxLength: 100 },
      title: { type: 'string', minLength: 1, maxLength: 200 },
      body: { type: 'string', maxLength: maxBody },
      tags: { type: 'array', items: { type: 'string' }, maxItems: 20 },
      published: { type: 'boolean' }
    }
  }
}

module.exports = { doc, articleBodySchema }
