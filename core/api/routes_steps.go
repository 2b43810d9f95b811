package api

// stepRoutes registers node traits (1.37), deploy templates (1.55) and
// runbooks (1.92).
func (s *server) stepRoutes(h func(pattern string, fn apiFunc)) {
	h("GET /v1/nodes/{node}/traits", s.getNodeTraits)
	h("PUT /v1/nodes/{node}/traits", s.putNodeTraits)
	h("DELETE /v1/nodes/{node}/traits", s.deleteNodeTraits)
	h("PUT /v1/nodes/{node}/traits/{trait}", s.putNodeTraits)
	h("DELETE /v1/nodes/{node}/traits/{trait}", s.deleteNodeTraits)
	deployTemplates.routes(s, h)
	runbooks.routes(s, h)
}
