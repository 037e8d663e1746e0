// Changes to the base server's in-memory model, applied by monkey-patching its classes:
// a change-feed position (_lsn) on every document write, TTL, several physical partition-key
// ranges per container, and container replacement that keeps the documents.
"use strict";

const lib = "@vercel/cosmosdb-server/lib";
const accountModule = require(`${lib}/account`);
const collectionModule = require(`${lib}/account/collection`);
const Collections = require(`${lib}/account/collections`).default;
const Documents = require(`${lib}/account/documents`).default;
const PartitionKeyRanges = require(`${lib}/account/partition-key-ranges`).default;
const { epkOf, rangeBounds } = require("./epk");

const state = { account: null, lsn: 0, rangeCount: 1 };

// The base server builds its account when listening; keep a handle on it for our handlers.
const BaseAccount = accountModule.default;
accountModule.default = class extends BaseAccount {
  constructor(...args) {
    super(...args);
    state.account = this;
  }
};

// ---------------------------------------------------------------- partition-key ranges
const BaseCollection = collectionModule.default;
collectionModule.default = class extends BaseCollection {
  constructor(data) {
    super(data);
    if (!data || state.rangeCount <= 1) return;
    // Real containers have one range per physical partition; the SDK reads them from /pkranges
    // and sends a range id (and EPK bounds for sub-ranges) with each change-feed request.
    this.partitionKeyRanges = new PartitionKeyRanges(this, ["/id"]);
    const bounds = rangeBounds(state.rangeCount);
    for (let i = 0; i < state.rangeCount; i += 1) {
      this.partitionKeyRanges.create({
        id: String(i), minInclusive: bounds[i], maxExclusive: bounds[i + 1], ridPrefix: i,
        throughputFraction: 1 / state.rangeCount, status: "online", parents: [],
      });
    }
  }
};

// Replacing a container (indexing policy, TTL) must keep its documents; the base server makes
// a fresh, empty one.
const baseReplace = Collections.prototype.replace;
Collections.prototype.replace = function replace(data, original) {
  const before = this._item("/id", original.id, original.id);
  const result = baseReplace.call(this, data, original);
  const after = this._item("/id", data.id, data.id);
  for (const key of ["documents", "partitionKeyRanges", "userDefinedFunctions"]) {
    after[key] = before[key];
    after[key]._parent = after;
  }
  return result;
};

// ---------------------------------------------------------------- change-feed positions
const baseSet = Documents.prototype._set;
Documents.prototype._set = function set(data) {
  state.lsn += 1;
  data._lsn = state.lsn; // every write gets the next position; the feed orders by it
  noteExpiry(this, data);
  return baseSet.call(this, data);
};

// ---------------------------------------------------------------- TTL
const nowSeconds = () => Math.floor(Date.now() / 1000);

function defaultTtlOf(items) {
  const parent = items._parent && items._parent.read && items._parent.read();
  return parent ? parent.defaultTtl : undefined;
}

function expiryOf(doc, defaultTtl) {
  if (defaultTtl === undefined || defaultTtl === null) return Infinity; // TTL off: item ttl ignored
  const ttl = doc.ttl !== undefined ? doc.ttl : defaultTtl;
  if (ttl === undefined || ttl === null || ttl === -1) return Infinity;
  return doc._ts + ttl;
}

function noteExpiry(items, doc) {
  const at = expiryOf(doc, defaultTtlOf(items));
  if (items._nextExpiry !== undefined && at < items._nextExpiry) items._nextExpiry = at;
}

// Expired documents are deleted lazily before any access. The earliest expiry is remembered so
// most calls cost nothing; a change of the container's default TTL forces a full sweep.
function purgeExpired(items) {
  const defaultTtl = defaultTtlOf(items);
  const now = nowSeconds();
  if (items._purging) return; // the sweep's own deletes come back through the wrappers
  if (items._ttlSeen === defaultTtl && items._nextExpiry !== undefined && now < items._nextExpiry) {
    return;
  }
  items._purging = true;
  try {
    let next = Infinity;
    for (const item of [...items._data.values()]) {
      const doc = item.read();
      if (!doc) continue;
      const at = expiryOf(doc, defaultTtl);
      if (at <= now) baseDelete.call(items, doc.id, items._getPartition(doc));
      else next = Math.min(next, at);
    }
    items._ttlSeen = defaultTtl;
    items._nextExpiry = next;
  } finally {
    items._purging = false;
  }
}

const baseDelete = Documents.prototype.delete;
for (const name of ["create", "delete", "query", "read", "replace", "upsert", "_item"]) {
  const original = Documents.prototype[name];
  Documents.prototype[name] = function withTtl(...args) {
    purgeExpired(this);
    return original.apply(this, args);
  };
}

// ---------------------------------------------------------------- helpers for handlers
function collectionOf(dbId, collId) {
  const collection = state.account.database(dbId).collection(collId);
  return collection.read() ? collection : null;
}

function liveDocuments(items) {
  purgeExpired(items);
  return [...items._data.values()].map(item => item.read()).filter(Boolean);
}

function epkOfDoc(items, doc) {
  return epkOf(items._getPartition(doc));
}

module.exports = { state, collectionOf, liveDocuments, purgeExpired, epkOfDoc };

// ---------------------------------------------------------------- composite indexes
// Cosmos DB serves ORDER BY from a composite index read either way: (a ASC, b ASC) serves
// "ORDER BY a ASC, b ASC" and "ORDER BY a DESC, b DESC". The base query engine accepts only
// the exact directions; give it every composite index reversed as well.
const queryHelpers = require("@zeit/cosmosdb-query/lib/helpers");
const baseSort = queryHelpers.sort;
const flip = (order) => (order === "descending" ? "ascending" : "descending");
queryHelpers.sort = (collection, getRid, compositeIndexes, ...orders) => {
  const both = compositeIndexes
    ? compositeIndexes.concat(compositeIndexes.map((index) =>
        index.map((path) => ({ ...path, order: flip(path.order || "ascending") }))))
    : compositeIndexes;
  return baseSort(collection, getRid, both, ...orders);
};
