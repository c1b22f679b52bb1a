"""What both Python drivers report of a page of events holding a type their client was generated
without, and of that event read alone (unknown_events.py for openapi-python-client,
openapi_generator_round_trip.py for openapi-generator): one shape, so test/e2e compares them alike.
The two generators name two fields differently, hence `type_field` and `object_field`."""


def unknown_summary(kinds, alone, unknown, type_field, object_field):
    """`kinds`: the model names seen per event type; `alone`: the unknown event as read by its id;
    `unknown`: the same event as the page held it."""
    return {
        "types": {kind: sorted(models) for kind, models in sorted(kinds.items())},
        "unknown": {
            "model": type(alone).__name__,
            "type": getattr(alone, type_field),
            "data_object": getattr(alone.data, object_field),
            "same_id": alone.id == unknown.id and alone.data.id == unknown.data.id,
        },
    }
