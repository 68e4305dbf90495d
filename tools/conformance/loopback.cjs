// Preloaded into the conformance runner (NODE_OPTIONS=--require): a TCP server that listens without a
// host (the suite's scenario servers call listen(0), which means every interface) is bound to 127.0.0.1.
// The patch is on Node's internal bind step so that the bind stays synchronous: the suite reads
// server.address() right after listen(0).
"use strict";
const net = require("node:net");
const bind = net.Server.prototype._listen2;
net.Server.prototype._listen2 = function (address, port, addressType, backlog, fd, flags) {
  if (!address && typeof fd !== "number") {
    return bind.call(this, "127.0.0.1", port, 4, backlog, fd, flags);
  }
  return bind.call(this, address, port, addressType, backlog, fd, flags);
};
