// Decoder faults for drills and tests, shared by the mesh page (room.js) and the Janus page
// (janus-room.js); off unless the page is asked for them. A wedged decoder: every encoded frame of a
// video receiver is dropped before the decoder (wedge-worker.js), so its decoded count stops.
// Chromium applies an encoded transform only when it is set as a receiver is created, so a page
// armed for faults (?faults=on, or ?fault=KIND@S) gives every video receiver a pass-through
// transform from the start (`arm`), and a fault tells it to drop (`setDropping`). An unarmed page
// sets no transform at all.
'use strict';

class DecoderFaults {
  // onSwallowed(n): the worker says it dropped n more frames (about every 30).
  constructor(params, onSwallowed) {
    this.params = params;
    this.armed = params.get('faults') === 'on' || params.has('fault');
    this.onSwallowed = onSwallowed || (() => {});
    this.transforms = new WeakMap();   // receiver -> transform id
    this.worker = null;
    this.next = 0;
  }

  get available() { return typeof RTCRtpScriptTransform !== 'undefined'; }

  // Why a wedge cannot be had on this page, or null when it can.
  refusal() {
    if (!this.available) return 'this browser has no RTCRtpScriptTransform: no decoder wedge';
    if (!this.armed) return 'faults are off on this page: open it with ?faults=on (or ?fault=KIND@S) to wedge a decoder';
    return null;
  }

  arm(receiver) {
    if (!this.armed || this.transforms.has(receiver) || !this.available) return;
    if (!this.worker) {
      this.worker = new Worker('/client/wedge-worker.js');  // same origin: the page's policy allows no blob: workers
      this.worker.onmessage = ({ data }) => { if (data.dropped) this.onSwallowed(1); };
    }
    this.next += 1;
    receiver.transform = new RTCRtpScriptTransform(this.worker, { id: this.next });
    this.transforms.set(receiver, this.next);
  }

  // Drops (or passes again) the frames of an armed receiver; false for one not armed.
  setDropping(receiver, drop) {
    const id = this.transforms.get(receiver);
    if (id === undefined) return false;
    this.worker.postMessage({ id, drop });
    return true;
  }

  // ?fault=decoder-wedge@20: apply('decoder-wedge') 20 s from now; with &faultClock=MS (wall-clock
  // milliseconds), 20 s after that instant instead (a test's clock, which started before this
  // page loaded).
  scheduleFromURL(apply) {
    const asked = this.params.get('fault');
    if (!asked) return;
    const [kind, seconds] = asked.split('@');
    const clock = Number(this.params.get('faultClock'));
    const since = Number.isFinite(clock) && clock > 0 ? Math.max(0, Date.now() - clock) : 0;
    setTimeout(() => apply(kind), Math.max(0, (Math.max(0, Number(seconds) || 0) * 1000) - since));
  }
}
