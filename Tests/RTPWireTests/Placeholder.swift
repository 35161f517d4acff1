import RTPWire
