import KakapoJSON

extension JSONPointer {
    /// The pointer for an error message; the top of the document, whose pointer is empty, says so.
    var place: String { components.isEmpty ? "(the top level)" : description }
}
