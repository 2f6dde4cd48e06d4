/** Static content of the reference service: the home page and the logo. */

export const logoSvg = `<svg xmlns="http://www.w3.org/2000/svg" width="120" height="40" viewBox="0 0 120 40">
<rect width="120" height="40" rx="6" fill="#1f2937"/>
<text x="60" y="26" font-family="sans-serif" font-size="16" fill="#f9fafb" text-anchor="middle">articles</text>
</svg>
`

export const homePage = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Articles API: HTTP conventions reference service</title>
</head>
<body>
<header><img src="/public/logo.svg" alt="articles logo" width="120" height="40"></header>
<h1>Articles API</h1>
<p>A small service built from <code>fastify-http-conventions</code>. It follows one HTTP convention document:</p>
<ul>
<li><strong>Content-Type</strong>: requests with a body carry one (JSON or XML, UTF-8); else 415.</li>
<li><strong>Content-Length</strong>: POST, PUT and PATCH need a valid one; a missing, wrong or oversized one is 411.</li>
<li><strong>422</strong>: validation problems come back as <code>{"errors":[{"field","message"}]}</code>, one entry per problem.</li>
<li><strong>Conditional requests</strong>: <code>ETag</code> and <code>Last-Modified</code> on articles; <code>If-Match</code> on writes (412 when stale).</li>
</ul>
<h2>Routes</h2>
<ul>
<li><code>GET /articles</code> (<code>?tag=</code>, <code>?limit=1..100</code>)</li>
<li><code>POST /articles</code></li>
<li><code>GET</code>, <code>HEAD</code>, <code>PUT</code>, <code>PATCH</code>, <code>DELETE /articles/{id}</code> (an unknown id: 404, <code>article not found</code>)</li>
<li><code>GET /openapi.json</code>: the OpenAPI document of every answer of every route (XML bodies, redirects and errors included)</li>
</ul>
</body>
</html>
`
