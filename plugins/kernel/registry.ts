/**
 * Per context, through Fastify's public API: the root decorates its node, and an `onRegister`
 * hook gives every context made after it a node of its own whose parent is the node it
 * inherited (the pattern Fastify documents for encapsulated decorators). Lookups walk the
 * nodes when asked, so a convention registered in a context later is seen by its
 * descendants made before.
 */
import type { FastifyInstance } from 'fastify'
import type { ErrorFormat } from '../../lib/render'
import type { Profile } from '../../lib/profile'
import type { ConventionKey } from './pipeline'
import type { Convention, ErrorFallback } from './types'
import { kNode } from './symbols'

export interface Node {
  readonly parent: Node | null
  readonly entries: Map<ConventionKey, Convention>
  /** Defaults of needed conventions made for this context's routes. */
  readonly made: Map<ConventionKey, Convention>
  profile?: Profile
  fallback?: ErrorFallback
  format?: ErrorFormat
}

export function newNode (parent: Node | null): Node {
  return { parent, entries: new Map(), made: new Map() }
}

/** The node of `instance`'s context; undefined where the suite is not installed above it. */
export function nodeOf (instance: FastifyInstance): Node | undefined {
  return (instance as unknown as Record<symbol, Node | undefined>)[kNode]
}

/** Gives each new context its node (an `onRegister` hook of the root). */
export function giveNode (child: FastifyInstance): void {
  (child as unknown as Record<symbol, Node>)[kNode] = newNode(nodeOf(child) ?? null)
}

/** The nearest value `pick` finds, from `node` up through its ancestors (encapsulation). */
export function nearest<T> (node: Node | null | undefined, pick: (n: Node) => T | undefined): T | undefined {
  for (let n = node; n !== undefined && n !== null; n = n.parent) {
    const found = pick(n)
    if (found !== undefined) return found
  }
  return undefined
}

export function lookup (node: Node | null | undefined, key: ConventionKey): Convention | undefined {
  return nearest(node, (n) => n.entries.get(key))
}

export function formatOf (node: Node | null | undefined): ErrorFormat {
  return nearest(node, (n) => n.format) ?? 'envelope'
}
