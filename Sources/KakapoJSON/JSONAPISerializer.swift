/// Serializes one entity or many as a JSON:API document (jsonapi.org, v1.1): `data`, `included`
/// (each type and id once, never repeating primary data), top-level `links` and `meta`.
///
/// Properties holding entities become relationships with resource linkage: to-one (`{"type","id"}`),
/// to-many (an array), and `"data": null` for an empty to-one (a nil optional or `PropertyPolicy.null`);
/// `PropertyPolicy.none` leaves the relationship out. Everything else is an attribute.
public struct JSONAPISerializer<Entity: JSONAPIEntity>: CustomSerializable {
    private let entities: [Entity]
    private let isCollection: Bool
    private let topLevelLinks: [String: JSONAPILink]?
    private let topLevelMeta: JSONValue?
    private let includeChildren: Bool
    private let includeAllChildren: Bool

    /// A document whose primary data is one resource.
    /// - Parameters:
    ///   - includeChildren: put the related entities in `included`.
    ///   - includeAllChildren: also include their related entities, and theirs, all the way down.
    public init(
        _ entity: Entity, topLevelLinks: [String: JSONAPILink]? = nil, topLevelMeta: JSONValue? = nil,
        includeChildren: Bool = true, includeAllChildren: Bool = false
    ) {
        self.entities = [entity]
        self.isCollection = false
        self.topLevelLinks = topLevelLinks
        self.topLevelMeta = topLevelMeta
        self.includeChildren = includeChildren
        self.includeAllChildren = includeAllChildren
    }

    /// A document whose primary data is an array of resources.
    public init(
        _ entities: [Entity], topLevelLinks: [String: JSONAPILink]? = nil, topLevelMeta: JSONValue? = nil,
        includeChildren: Bool = true, includeAllChildren: Bool = false
    ) {
        self.entities = entities
        self.isCollection = true
        self.topLevelLinks = topLevelLinks
        self.topLevelMeta = topLevelMeta
        self.includeChildren = includeChildren
        self.includeAllChildren = includeAllChildren
    }

    public func customSerialized(transformingKeys keyTransformer: KeyTransformer?) -> JSONValue? {
        var document = JSONObject()
        var seen = Set(entities.map { ResourceKey($0) })
        var included: [JSONValue] = []
        var queue: [any JSONAPIEntity] = []
        let primary = entities.map { entity -> JSONValue in
            let resource = JSONAPIResource(entity, keyTransformer: keyTransformer)
            queue.append(contentsOf: resource.children)
            return resource.json
        }
        document["data"] = isCollection ? .array(primary) : primary.first ?? .null
        if includeChildren || includeAllChildren {
            var index = 0
            while index < queue.count {
                let child = queue[index]
                index += 1
                guard seen.insert(ResourceKey(child)).inserted else { continue }
                let resource = JSONAPIResource(child, keyTransformer: keyTransformer)
                included.append(resource.json)
                if includeAllChildren { queue.append(contentsOf: resource.children) }
            }
        }
        if !included.isEmpty { document["included"] = .array(included) }
        if let topLevelLinks {
            document["links"] = KakapoSerialization.serialize(topLevelLinks)
        }
        if let topLevelMeta { document["meta"] = topLevelMeta }
        return .object(document)
    }
}

/// Type and id: what identifies a resource in a document.
struct ResourceKey: Hashable {
    let type: String
    let id: String

    init(_ entity: any JSONAPIEntity) {
        type = Swift.type(of: entity).type
        id = entity.id
    }
}

/// One entity as a resource object, and the entities it relates to.
struct JSONAPIResource {
    private(set) var json: JSONValue = .null
    private(set) var children: [any JSONAPIEntity] = []

    init(_ entity: any JSONAPIEntity, keyTransformer: KeyTransformer?) {
        var attributes = JSONObject()
        var relationships = JSONObject()
        let mirror = Mirror(reflecting: entity)
        for child in mirror.children {
            guard let label = child.label, label != "id" else { continue }
            if label == "links", entity is any JSONAPILinkedEntity { continue }
            let key = keyTransformer?(label) ?? label
            switch Self.relationship(child.value) {
            case .notARelationship:
                if let value = KakapoSerialization.serialize(child.value, keyTransformer: keyTransformer) {
                    attributes[key] = value
                }
            case .omitted:
                continue
            case .empty:
                relationships[key] = .object(["data": .null])
            case .toOne(let related):
                relationships[key] = .object(["data": Self.linkage(related)])
                children.append(related)
            case .toMany(let related):
                relationships[key] = .object(["data": .array(related.map(Self.linkage))])
                children.append(contentsOf: related)
            }
        }
        var object: JSONObject = [
            "id": .string(entity.id),
            "type": .string(type(of: entity).type),
        ]
        if !attributes.isEmpty { object["attributes"] = .object(attributes) }
        if !relationships.isEmpty { object["relationships"] = .object(relationships) }
        if let linked = entity as? any JSONAPILinkedEntity, let links = linked.links {
            object["links"] = KakapoSerialization.serialize(links)
        }
        json = .object(object)
    }

    static func linkage(_ entity: any JSONAPIEntity) -> JSONValue {
        .object(["type": .string(type(of: entity).type), "id": .string(entity.id)])
    }

    enum Relationship {
        case notARelationship
        case omitted
        case empty
        case toOne(any JSONAPIEntity)
        case toMany([any JSONAPIEntity])
    }

    static func relationship(_ value: Any) -> Relationship {
        if let entity = value as? any JSONAPIEntity { return .toOne(entity) }
        if let entities = value as? [any JSONAPIEntity] { return .toMany(entities) }
        if let optional = value as? any OptionalReflecting {
            if let wrapped = optional.wrappedValue { return relationship(wrapped) }
            return isEntityType(type(of: optional).wrappedType) ? .empty : .notARelationship
        }
        if let policy = value as? any PropertyPolicyReflecting {
            guard isEntityType(type(of: policy).wrappedType) else { return .notARelationship }
            switch policy.policyState {
            case .none: return .omitted
            case .null: return .empty
            case .some(let wrapped): return relationship(wrapped)
            }
        }
        return .notARelationship
    }

    static func isEntityType(_ type: Any.Type) -> Bool {
        type is any JSONAPIEntity.Type || type is [any JSONAPIEntity].Type
    }
}
