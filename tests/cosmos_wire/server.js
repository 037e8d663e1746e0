// A Cosmos DB protocol server for the contract and integration tests: @vercel/cosmosdb-server
// extended where it falls short of what the product relies on (see docs/cosmos-wire.md).
//
// Usage: node server.js [port] [--feed-ranges N]
//   Listens on 127.0.0.1 over HTTP (port 0: any free port) and prints "listening <port>" once
//   ready. --feed-ranges gives every new container N physical partition-key ranges (default 1),
//   so feed-range code paths of the SDK run as against a multi-partition container.
"use strict";

const { state, collectionOf } = require("./lib/patches"); // must load before the base server
const { batch } = require("./lib/batch");
const { changeFeed } = require("./lib/feed");
const { query } = require("./lib/query");
const documents = require("./lib/documents");
const { send } = require("./lib/http");
const { createHttpServer } = require("@vercel/cosmosdb-server/lib");

const DOCS = /^\/dbs\/([^/]+)\/colls\/([^/]+)\/docs$/;
const DOC = /^\/dbs\/([^/]+)\/colls\/([^/]+)\/docs\/([^/]+)$/;

const isTrue = value => String(value || "").toLowerCase() === "true";

// Our handler for a request, or null to let the base server answer it.
function route(req, path) {
  const h = req.headers;
  let m = DOCS.exec(path);
  if (m) {
    const collection = collectionOf(m[1], m[2]);
    if (!collection) return res => send(res, 404, documents.NOT_FOUND);
    if (req.method === "POST" && isTrue(h["x-ms-cosmos-is-batch-request"])) return res => batch(req, res, collection);
    if (req.method === "POST" && (isTrue(h["x-ms-documentdb-isquery"]) || h["content-type"] === "application/query+json")) {
      if (isTrue(h["x-ms-cosmos-is-query-plan-request"])) return null;
      return res => query(req, res, collection);
    }
    if (req.method === "POST") {
      const kind = isTrue(h["x-ms-documentdb-is-upsert"]) ? "upsert" : "create";
      return res => documents.write(req, res, collection, kind);
    }
    if (req.method === "GET" && String(h["a-im"] || "").toLowerCase() === "incremental feed") {
      return res => changeFeed(req, res, collection);
    }
    return null;
  }
  m = DOC.exec(path);
  if (m) {
    const collection = collectionOf(m[1], m[2]);
    if (!collection) return res => send(res, 404, documents.NOT_FOUND);
    if (req.method === "GET") return res => documents.read(req, res, collection, m[3]);
    if (req.method === "PUT") return res => documents.write(req, res, collection, "replace", m[3]);
  }
  return null;
}

function main(argv) {
  const args = argv.slice(2);
  const at = args.indexOf("--feed-ranges");
  if (at >= 0) {
    state.rangeCount = Math.max(1, parseInt(args[at + 1], 10) || 1);
    args.splice(at, 2);
  }
  const server = createHttpServer();
  const [baseListener] = server.listeners("request");
  server.removeAllListeners("request");
  server.on("request", (req, res) => {
    const path = decodeURIComponent(new URL(req.url, "http://localhost").pathname)
      .replace(/^\/\//, "/").replace(/\/+$/, "");
    if (process.env.WIRE_DEBUG) process.stderr.write(`${req.method} ${path} ${JSON.stringify(req.headers)}\n`);
    let handler;
    try {
      handler = route(req, path);
    } catch (err) {
      return send(res, 400, { code: "BadRequest", message: err.message });
    }
    if (!handler) return baseListener(req, res);
    return Promise.resolve()
      .then(() => handler(res))
      .catch(err => {
        if (!res.headersSent) send(res, err instanceof SyntaxError ? 400 : 500, { message: err.message });
      });
  });
  const port = parseInt(args[0] || "0", 10);
  server.listen(port, "127.0.0.1", () => {
    process.stdout.write(`listening ${server.address().port}\n`);
  });
}

main(process.argv);
