/**
 * Which partition a key belongs to and which node owns a partition. Pure functions: every node
 * computes the same answers from the same inputs.
 */

const FNV_OFFSET = 0x811c9dc5
const FNV_PRIME = 0x01000193
const encoder = new TextEncoder()

/** FNV-1a, 32 bit, over the UTF-8 bytes of the input. */
export const fnv1a32 = (input: string): number => {
  let hash = FNV_OFFSET
  // Keys are nearly always ASCII: hash the char codes directly, without encoding.
  if (/^[\x00-\x7f]*$/.test(input)) {
    for (let i = 0; i < input.length; i++) {
      hash ^= input.charCodeAt(i)
      hash = Math.imul(hash, FNV_PRIME)
    }
    return hash >>> 0
  }
  const bytes = encoder.encode(input)
  for (let i = 0; i < bytes.length; i++) {
    hash ^= bytes[i]!
    hash = Math.imul(hash, FNV_PRIME)
  }
  return hash >>> 0
}

/** partition = fnv1a32(key) mod partitions (ACTORS.md). */
export const partitionOf = (key: string, partitions: number): number => fnv1a32(key) % partitions

/**
 * Rendezvous (highest random weight) hashing: the owner of (kind, partition) is the live node with
 * the highest hash of (node, kind, partition). When a node joins or leaves, only the partitions it
 * wins or held move; everything else stays where it is.
 */
export const ownerOf = (nodes: ReadonlyArray<string>, kind: string, partition: number): string | undefined => {
  let best: string | undefined
  let bestWeight = -1
  for (const node of nodes) {
    const weight = mix(fnv1a32(`${node}/${kind}/${partition}`))
    if (weight > bestWeight || (weight === bestWeight && best !== undefined && node < best)) {
      best = node
      bestWeight = weight
    }
  }
  return best
}

// FNV-1a of near-identical strings differs in few bits; MurmurHash3's finaliser spreads them, so
// each node wins a fair share of partitions.
const mix = (h: number): number => {
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

/** The partitions of `kind` that `node` should own, given the live nodes. */
export const assignedTo = (node: string, nodes: ReadonlyArray<string>, kind: string, partitions: number): Array<number> => {
  const mine: Array<number> = []
  for (let p = 0; p < partitions; p++) if (ownerOf(nodes, kind, p) === node) mine.push(p)
  return mine
}

/**
 * Keys become the last subject token (NATS tokens may not contain '.', '*', '>' or whitespace)
 * and a text column (no control characters, no unpaired surrogates).
 */
export const isValidKey = (key: string): boolean =>
  key.length > 0 && key.length <= 200 && /^[^\s.*>\u0000-\u001f\u007f]+$/.test(key) && !/[\ud800-\udfff]/.test(key.replace(/[\ud800-\udbff][\udc00-\udfff]/g, ""))
