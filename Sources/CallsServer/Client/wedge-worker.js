// Fault injection for drills and tests (room.js, window.sharectlFault): the encoded transform set
// on each video receiver when the page is armed for faults. It passes every frame through until
// told to drop those of its receiver (a wedged decoder: nothing reaches the decoder and its
// decoded count stops), and passes them again when told.
'use strict';

const receivers = new Map();  // id -> { drop, dropped }

onmessage = ({ data }) => {
  const receiver = receivers.get(data.id) || { drop: false, dropped: 0 };
  receiver.drop = !!data.drop;
  receivers.set(data.id, receiver);
};

onrtctransform = (event) => {
  const { readable, writable, options } = event.transformer;
  const id = options.id;
  if (!receivers.has(id)) receivers.set(id, { drop: false, dropped: 0 });
  readable.pipeThrough(new TransformStream({
    transform(frame, controller) {
      const receiver = receivers.get(id);
      if (!receiver.drop) {
        controller.enqueue(frame);
        return;
      }
      receiver.dropped += 1;
      if (receiver.dropped % 30 === 1) postMessage({ id, dropped: receiver.dropped });
    },
  })).pipeTo(writable);
};
