// Which simulcast layer a Janus subscriber asks for: the browser's copy of sharectl's
// SubscriberLayerRule (Sources/CallsClient/Share/SubscriberLayerRule.swift), held to the same
// marble cases (Tests/Ladder/subscriber-layer-cases.json, in headless Chromium by the client
// gates). Janus 1.1 forwards the layer each subscriber asks for and does not choose by bandwidth,
// so the subscriber judges from its own receive figures, once a second:
// - a second is bad when over 10 % of its packets were lost, when packets came but no frame
//   decoded (a freeze), or when the path held over 150 ms (when there is a reading);
// - it is good when under 2 % were lost, frames decoded and under 50 ms was held;
// - two bad seconds step down a layer (a freeze alone at once); the two seconds after a switch are
//   not judged, and before the first frame waiting is not a freeze;
// - good seconds for the hold (8 s at first) step up a layer; a step up that turns bad within
//   10 s doubles the hold (up to 64 s); 30 s on a layer reached by stepping up brings it back;
// - the most that arrived in the congested seconds before a step down is what the link carried,
//   remembered for 60 s: a layer that needed 90 % of it or more is not stepped up to until then.
// Pure: the caller passes the time (ms) with each second.
'use strict';

const LAYER_FIRST_UP_HOLD_MS = 8000;
const LAYER_LONGEST_UP_HOLD_MS = 64000;
const LAYER_SETTLE_MS = 2000;
const LAYER_FAILED_UP_MS = 10000;
const LAYER_PROVEN_UP_MS = 30000;
const LAYER_CAPACITY_MEMORY_MS = 60000;

class SubscriberLayerRule {
  constructor(top = 2, layer = null) {
    this.top = Math.max(0, top);
    this.layer = Math.min(Math.max(0, layer === null ? this.top : layer), this.top);
    this.upHoldMs = LAYER_FIRST_UP_HOLD_MS;
    this.badSeconds = 0;
    this.goodSince = null;
    this.switchedAt = null;
    this.steppedUpAt = null;
    this.decoding = false;
    this.layerKbps = new Map();   // the most that arrived in a second on each layer while received
    this.capacity = null;         // { kbps, at }: what the link carried when it last failed
    this.congestedKbps = null;
  }

  // second: { now (ms), packets, lost, framesDecoded, queuingDelayMs (or null), receivedKbps (or
  // null) }. Returns the layer to ask for when it changes, else null.
  update(second) {
    const now = second.now;
    if (this.steppedUpAt !== null && now - this.steppedUpAt >= LAYER_PROVEN_UP_MS) {
      this.upHoldMs = LAYER_FIRST_UP_HOLD_MS;
      this.steppedUpAt = null;
    }
    if (this.switchedAt !== null && now - this.switchedAt < LAYER_SETTLE_MS) return null;
    const wasDecoding = this.decoding;
    if (second.framesDecoded > 0) this.decoding = true;
    if (second.receivedKbps !== null && second.receivedKbps !== undefined) {
      this.layerKbps.set(this.layer, Math.max(this.layerKbps.get(this.layer) || 0, second.receivedKbps));
    }
    const lost = Math.max(0, second.lost);
    const lossFraction = second.packets + lost > 0 ? lost / (second.packets + lost) : 0;
    const queued = second.queuingDelayMs || 0;
    const frozen = second.packets > 0 && second.framesDecoded === 0;
    const congested = lossFraction > 0.10 || queued > 150;
    if (congested || (wasDecoding && frozen)) {
      this.goodSince = null;
      this.badSeconds += 1;
      if (congested && second.receivedKbps !== null && second.receivedKbps !== undefined) {
        this.congestedKbps = Math.max(this.congestedKbps || 0, second.receivedKbps);
      }
      if (this.layer === 0 || !(this.badSeconds >= 2 || (wasDecoding && frozen))) return null;
      if (this.steppedUpAt !== null && now - this.steppedUpAt < LAYER_FAILED_UP_MS) {
        this.upHoldMs = Math.min(LAYER_LONGEST_UP_HOLD_MS, this.upHoldMs * 2);
      }
      this.steppedUpAt = null;
      if (this.congestedKbps !== null) this.capacity = { kbps: this.congestedKbps, at: now };
      return this.move(this.layer - 1, now);
    }
    this.badSeconds = 0;
    this.congestedKbps = null;
    const good = lossFraction < 0.02 && second.framesDecoded > 0 && queued < 50;
    if (!good) {
      this.goodSince = null;
      return null;
    }
    if (this.goodSince === null) this.goodSince = now;
    if (this.layer >= this.top || now - this.goodSince < this.upHoldMs || !this.fits(this.layer + 1, now)) return null;
    this.steppedUpAt = now;
    return this.move(this.layer + 1, now);
  }

  fits(next, now) {
    if (!this.capacity || now - this.capacity.at >= LAYER_CAPACITY_MEMORY_MS || !this.layerKbps.has(next)) return true;
    return this.layerKbps.get(next) < 0.9 * this.capacity.kbps;
  }

  move(next, now) {
    this.layer = next;
    this.switchedAt = now;
    this.badSeconds = 0;
    this.goodSince = null;
    this.congestedKbps = null;
    this.layerKbps.delete(next);   // measured afresh each time it is received
    return next;
  }
}
