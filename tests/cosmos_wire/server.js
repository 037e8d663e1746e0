// A Cosmos DB protocol server for the contract tests: @vercel/cosmosdb-server, extended where
// it falls short of what the product relies on (see docs/cosmos-wire.md):
//   - transactional batches are atomic (all or nothing, failing op's status, others 424);
//   - a latest-version change feed (A-IM: Incremental feed) ordered by a global LSN;
//   - TTL (container defaultTtl and per-item ttl): expired items vanish from reads, queries, feed;
//   - a read of a missing item answers 404 (the base server answers 500).
// Usage: node server.js [port]   (prints "listening <port>" once ready; HTTP on 127.0.0.1)
"use strict";

const lib = "@vercel/cosmosdb-server/lib";
const accountModule = require(`${lib}/account`);
const Items = require(`${lib}/account/items`).default;
const documentOperations = require(`${lib}/handler/_document-operations`);
const { parsePartitionKey } = require(`${lib}/utils/get-partition-from-header`);

// Capture the account the server creates so our handlers can reach the data.
let ACCOUNT = null;
const BaseAccount = accountModule.default;
accountModule.default = class extends BaseAccount {
  constructor(...args) {
    super(...args);
    ACCOUNT = this;
  }
};

// ---------------------------------------------------------------- change-feed positions
let LSN = 0;
const baseSet = Items.prototype._set;
Items.prototype._set = function set(data) {
  LSN += 1;
  data._lsn = LSN; // every write gets the next position; the feed orders by it
  return baseSet.call(this, data);
};

// ---------------------------------------------------------------- TTL
function now() {
  return Math.floor(Date.now() / 1000);
}

function defaultTtlOf(items) {
  const parent = items._parent && items._parent.read && items._parent.read();
  return parent ? parent.defaultTtl : undefined;
}

function expired(doc, defaultTtl) {
  if (defaultTtl === undefined || defaultTtl === null) return false; // TTL off on container
  const ttl = doc.ttl !== undefined ? doc.ttl : defaultTtl;
  if (ttl === undefined || ttl === null || ttl === -1) return false;
  return doc._ts + ttl <= now();
}

function purgeExpired(items) {
  const defaultTtl = defaultTtlOf(items);
  if (defaultTtl === undefined || defaultTtl === null) return;
  for (const item of [...items._data.values()]) {
    const doc = item.read();
    if (doc && expired(doc, defaultTtl)) {
      baseDelete.call(items, doc.id, items._getPartition(doc));
    }
  }
}

const baseDelete = Items.prototype.delete;
for (const name of ["create", "delete", "query", "read", "replace", "upsert", "_item"]) {
  const original = Items.prototype[name];
  Items.prototype[name] = function withTtl(...args) {
    if (!this._purging) {
      this._purging = true;
      try {
        purgeExpired(this);
      } finally {
        this._purging = false;
      }
    }
    return original.apply(this, args);
  };
}

// ---------------------------------------------------------------- helpers
function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on("data", chunk => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function send(res, status, body, headers = {}) {
  res.statusCode = status;
  res.setHeader("content-type", "application/json");
  res.setHeader("x-ms-request-charge", "1");
  res.setHeader("x-ms-activity-id", require("crypto").randomUUID());
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.end(body === undefined ? "" : JSON.stringify(body));
}

function collectionOf(dbId, collId) {
  const collection = ACCOUNT.database(dbId).collection(collId);
  return collection.read() ? collection : null;
}

const DOCS = /^\/dbs\/([^/]+)\/colls\/([^/]+)\/docs\/?$/;
const DOC = /^\/dbs\/([^/]+)\/colls\/([^/]+)\/docs\/([^/]+)$/;

// ---------------------------------------------------------------- atomic batch
async function batch(req, res, dbId, collId) {
  const ops = JSON.parse(await readBody(req));
  const collection = collectionOf(dbId, collId);
  if (!collection) return send(res, 404, { code: "NotFound", message: "collection" });
  const items = collection.documents;
  purgeExpired(items);
  const saved = { data: new Map(items._data), index: new Map(items._index), rid: items._ridCount, lsn: LSN };
  const pkHeader = req.headers["x-ms-documentdb-partitionkey"];
  const results = [];
  let failedAt = -1;
  for (let i = 0; i < ops.length; i += 1) {
    const input = { partitionKey: pkHeader, ...ops[i] };
    if (input.partitionKey === undefined) input.partitionKey = pkHeader;
    const op = String(input.operationType || "").toLowerCase();
    const fn = documentOperations[`${op}Operation`];
    if (!fn) return send(res, 400, { code: "BadRequest", message: `unsupported ${op}` });
    let result;
    try {
      result = fn(collection, input);
    } catch (err) {
      result = { statusCode: err.conflict ? 409 : 400, body: { message: err.message } };
    }
    if (result.statusCode >= 400) {
      failedAt = i;
      results.push({ statusCode: result.statusCode, requestCharge: 0 });
      break;
    }
    results.push({
      statusCode: result.statusCode,
      requestCharge: 1,
      eTag: result.body ? result.body._etag : undefined,
      resourceBody: result.body,
    });
  }
  if (failedAt >= 0) {
    // All or nothing: put the container back exactly as it was (etags included).
    items._data = saved.data;
    items._index = saved.index;
    items._ridCount = saved.rid;
    items._queryCache.reset ? items._queryCache.reset() : null;
    const out = ops.map((_, i) => (i === failedAt ? results[failedAt] : { statusCode: 424, requestCharge: 0 }));
    return send(res, 207, out);
  }
  return send(res, 200, results);
}

// ---------------------------------------------------------------- change feed
function changeFeed(req, res, dbId, collId) {
  const collection = collectionOf(dbId, collId);
  if (!collection) return send(res, 404, { code: "NotFound", message: "collection" });
  const items = collection.documents;
  purgeExpired(items);
  const ifNoneMatch = req.headers["if-none-match"];
  let after = 0;
  if (ifNoneMatch === "*") after = LSN; // "from now"
  else if (ifNoneMatch) after = parseInt(String(ifNoneMatch).replace(/"/g, ""), 10) || 0;
  const max = parseInt(req.headers["x-ms-max-item-count"] || "100", 10);
  const pkHeader = req.headers["x-ms-documentdb-partitionkey"];
  let partition = null;
  if (pkHeader && pkHeader !== "[{}]") partition = parsePartitionKey(pkHeader);
  let docs = [...items._data.values()].map(item => item.read())
    .filter(doc => doc && doc._lsn > after)
    .filter(doc => partition === null || items._getPartition(doc) === partition)
    .sort((a, b) => a._lsn - b._lsn);
  if (max > 0) docs = docs.slice(0, max);
  if (docs.length === 0) {
    return send(res, 304, undefined, { etag: `"${after}"`, "x-ms-item-count": "0" });
  }
  const last = docs[docs.length - 1]._lsn;
  return send(res, 200, { _rid: collection.read()._rid, Documents: docs, _count: docs.length },
    { etag: `"${last}"`, "x-ms-item-count": String(docs.length) });
}

// ---------------------------------------------------------------- server
const { createHttpServer } = require(lib);
const server = createHttpServer();
const [baseListener] = server.listeners("request");
server.removeAllListeners("request");
server.on("request", (req, res) => {
  const url = new URL(req.url, "http://localhost");
  const path = decodeURIComponent(url.pathname).replace(/\/+$/, "");
  if (process.env.WIRE_DEBUG) process.stderr.write(`${req.method} ${path}\n`);
  let m;
  try {
    if (req.method === "POST" && (m = DOCS.exec(path)) &&
        String(req.headers["x-ms-cosmos-is-batch-request"]).toLowerCase() === "true") {
      return void batch(req, res, m[1], m[2]).catch(err => send(res, 500, { message: err.message }));
    }
    if (req.method === "GET" && (m = DOCS.exec(path)) &&
        String(req.headers["a-im"] || "").toLowerCase() === "incremental feed") {
      return changeFeed(req, res, m[1], m[2]);
    }
    if (req.method === "GET" && (m = DOC.exec(path))) {
      const collection = collectionOf(m[1], m[2]);
      const pkHeader = req.headers["x-ms-documentdb-partitionkey"];
      const partition = pkHeader ? parsePartitionKey(pkHeader, m[3]) : m[3];
      if (!collection || !collection.document(m[3], partition).read()) {
        return send(res, 404, { code: "NotFound", message: "Entity with the specified id does not exist in the system." });
      }
    }
  } catch (err) {
    return send(res, 400, { code: "BadRequest", message: err.message });
  }
  return baseListener(req, res);
});
const port = parseInt(process.argv[2] || "0", 10);
server.listen(port, "127.0.0.1", () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
