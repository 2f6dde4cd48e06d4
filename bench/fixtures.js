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

module.exports = { doc }
