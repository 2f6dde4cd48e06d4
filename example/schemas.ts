/** JSON Schemas of the articles API (docs/reference-service.md). */

export const articleInput = {
  $id: 'https://fastify-http-conventions.dev/example/article-input.json',
  type: 'object',
  required: ['slug', 'title', 'body'],
  additionalProperties: false,
  properties: {
    slug: { type: 'string', minLength: 1, maxLength: 100, pattern: '^[a-z0-9]+(-[a-z0-9]+)*$' },
    title: { type: 'string', minLength: 1, maxLength: 200 },
    body: { type: 'string', maxLength: 200000 },
    tags: { type: 'array', maxItems: 20, uniqueItems: true, items: { type: 'string', minLength: 1, maxLength: 50 } },
    published: { type: 'boolean', default: false }
  }
} as const

export const article = {
  $id: 'https://fastify-http-conventions.dev/example/article.json',
  type: 'object',
  required: ['id', 'slug', 'title', 'body', 'tags', 'published', 'createdAt', 'updatedAt'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', readOnly: true },
    slug: articleInput.properties.slug,
    title: articleInput.properties.title,
    body: articleInput.properties.body,
    tags: articleInput.properties.tags,
    published: { type: 'boolean' },
    createdAt: { type: 'string', format: 'date-time', readOnly: true },
    updatedAt: { type: 'string', format: 'date-time', readOnly: true }
  }
} as const

export const idParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', minLength: 1, maxLength: 64 } }
} as const

export const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    tag: { type: 'string', minLength: 1, maxLength: 50 },
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 100 }
  }
} as const

/** The input schema without its $id, for body validation and XML conversion. */
export const { $id: _inputId, ...articleBody } = articleInput

/** The answers of the routes that are no articles, as OpenAPI documents them (a body per media type). */
export const pageResponse = {
  description: 'The home page: what the API is and the conventions it follows',
  content: { 'text/html': { schema: { type: 'string' } } }
} as const

export const logoResponse = {
  description: 'The logo, which any origin may embed',
  content: { 'image/svg+xml': { schema: { type: 'string' } } }
} as const

export const documentResponse = {
  description: 'This OpenAPI document',
  content: { 'application/json': { schema: { type: 'object', additionalProperties: true } } }
} as const

export const redirectResponse = {
  description: 'Temporary Redirect: repeat the same method and body at Location, the path without /v1 (the query kept)',
  content: { 'text/plain': { schema: { type: 'string' } } }
} as const
