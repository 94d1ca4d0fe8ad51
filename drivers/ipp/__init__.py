"""IPP Everywhere / AirPrint printers and CUPS queues: the wire encoding, the client, the driver."""
