// Whether a shared screen stands still, as a room's media report says it (docs/room-protocol.md):
// stalled after 4 s without a change of its decoded count (any change is movement: a rebuilt
// screen, or a fresh subscription, restarts at 0), and said so for at most 3 minutes. Shared by the
// mesh page (room.js) and the Janus page (janus-room.js); times in milliseconds on any one clock.
'use strict';

class ScreenStall {
  constructor(now) {
    this.frames = -1;
    this.movedAt = now;
    this.since = null;
  }

  // This moment's decoded count; whether the screen is to be reported stalled.
  observe(frames, now) {
    if (frames !== this.frames) {
      this.frames = frames;
      this.movedAt = now;
      this.since = null;
    }
    let stalled = now - this.movedAt >= ScreenStall.STALL_MS;
    if (stalled && this.since === null) this.since = now;
    if (stalled && now - this.since > ScreenStall.HOLD_MS) stalled = false;
    return stalled;
  }
}
ScreenStall.STALL_MS = 4000;
ScreenStall.HOLD_MS = 180000;
